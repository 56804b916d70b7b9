package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// toolMessages returns the contents of the tool messages of a recorded chat request.
func toolMessages(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

const skillsExtra = `
[agents.s]
model_provider = "openai.fake"
risk_profile = "supervised"
skill_bundles = ["team", "ops", "outside"]

[skill_bundles.team]

[skill_bundles.ops]
directory = "shared/ops"
include = ["backup", "restore"]
exclude = ["restore"]

[skill_bundles.outside]
directory = "/etc"
`

// A bundle with two skills written over skills/write, a second bundle filtered by include/exclude, and a bundle
// outside shared/ that is refused: the provider request carries the admitted skills, in full mode with their
// instructions, in compact mode with only their summaries (an always skill keeps its instructions) and the
// read_skill tool, which returns the skill. A deleted skill is archived and leaves the next prompt.
func TestSkillsReachTheProvider(t *testing.T) {
	t.Parallel()
	model := newLLM(t,
		stream(ctSSE, openAIText(5, 2, "full")),
		stream(ctSSE, openAIText(5, 2, "compact")),
		stream(ctSSE, openAIToolCall("read_skill", `{"name":"release-notes"}`)),
		stream(ctSSE, openAIText(5, 2, "read it")),
	)
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "supervised", skillsExtra)))
	c := dialRC(t, d, "")

	c.mustCall(api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "release-notes",
		"frontmatter": map[string]any{"description": "Writes the release notes of a version.", "tags": []string{"docs"}},
		"body":        "1. Read CHANGELOG.md since the last tag.\n2. Group by feature & fix.\n"}, nil)
	c.mustCall(api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "triage",
		"frontmatter": map[string]any{"name": "triage", "description": "Sorts new issues.", "always": true},
		"body":        "Label every issue within a day."}, nil)
	ops := filepath.Join(d.ConfigDir, "shared", "ops")
	for name, desc := range map[string]string{"backup": "Backs up the database.", "restore": "Excluded by the bundle.", "other": "Not included."} {
		mustWrite(t, filepath.Join(ops, name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nSteps of "+name+".\n")
	}

	var list api.SkillsListResult
	c.mustCall(api.MethodSkillsList, map[string]any{"bundle": "team"}, &list)
	if len(list.Skills) != 2 || list.Skills[0].Name != "release-notes" || list.Skills[1].Name != "triage" ||
		list.Skills[0].Directory != filepath.Join(d.ConfigDir, "shared", "skills", "team", "release-notes") ||
		string(list.Skills[1].Frontmatter) != `{"name":"triage","description":"Sorts new issues.","always":true}` {
		t.Fatalf("skills/list team = %+v", list)
	}
	var read api.SkillsReadResult
	c.mustCall(api.MethodSkillsRead, map[string]any{"bundle": "team", "name": "release-notes"}, &read)
	if read.Body != "1. Read CHANGELOG.md since the last tag.\n2. Group by feature & fix.\n" ||
		string(read.Frontmatter) != `{"name":"release-notes","description":"Writes the release notes of a version.","tags":["docs"]}` {
		t.Fatalf("skills/read = %+v", read)
	}

	sid := c.newSession(api.SessionNewParams{AgentAlias: "s"}).SessionID
	sys := lastSystem(t, c, model, sid, "full please")
	inOrder(t, sys, "## Safety", "## Available Skills", "<name>release-notes</name>",
		"<instruction>1. Read CHANGELOG.md since the last tag.\n2. Group by feature &amp; fix.</instruction>",
		"<name>triage</name>", "<instruction>Label every issue within a day.</instruction>",
		"<name>backup</name>", "<instruction>Steps of backup.</instruction>", "</available_skills>", "## Workspace")
	for _, absent := range []string{"restore", "<name>other</name>", "/etc"} {
		if strings.Contains(sys[strings.Index(sys, "## Available Skills"):], absent) {
			t.Fatalf("full mode carries %q:\n%s", absent, sys)
		}
	}
	_, bodies := model.requests()
	if slices.Contains(toolNames(t, bodies[0]), "read_skill") {
		t.Fatal("read_skill offered in full mode")
	}

	c.mustCall(api.MethodConfigSet, map[string]any{"prop": "skills.prompt_injection_mode", "value": "compact"}, nil)
	sys = lastSystem(t, c, model, sid, "compact please")
	inOrder(t, sys, "## Available Skills", "read_skill", "<name>release-notes</name>",
		"<location>"+filepath.Join(d.ConfigDir, "shared", "skills", "team", "release-notes", "SKILL.md")+"</location>",
		"<name>triage</name>", "<instruction>Label every issue within a day.</instruction>", "<name>backup</name>")
	if strings.Contains(sys, "Read CHANGELOG.md") || strings.Contains(sys, "Steps of backup.") {
		t.Fatalf("compact mode inlines instructions:\n%s", sys)
	}
	_, bodies = model.requests()
	if !slices.Contains(toolNames(t, bodies[1]), "read_skill") {
		t.Fatalf("compact mode does not offer read_skill: %q", toolNames(t, bodies[1]))
	}

	if tr := c.prompt(sid, "write the release notes", hooks{}); tr.err != nil || tr.result.Content != "read it" {
		t.Fatalf("read_skill turn: %+v %v", tr.result, tr.err)
	}
	_, bodies = model.requests()
	if got := toolMessages(t, bodies[3]); len(got) != 1 || !strings.Contains(got[0], "1. Read CHANGELOG.md since the last tag.") ||
		!strings.Contains(got[0], `description: "Writes the release notes of a version."`) {
		t.Fatalf("read_skill result: %q", got)
	}

	var del api.SkillsDeleteResult
	c.mustCall(api.MethodSkillsDelete, map[string]any{"bundle": "team", "name": "release-notes"}, &del)
	if !del.Deleted {
		t.Fatalf("skills/delete = %+v", del)
	}
	archived, _ := filepath.Glob(filepath.Join(d.ConfigDir, "shared", "skills", "_deleted", "release-notes-*", "SKILL.md"))
	if len(archived) != 1 {
		t.Fatalf("archive: %q", archived)
	}
	if sys = lastSystem(t, c, model, sid, "after delete"); strings.Contains(sys, "release-notes") || !strings.Contains(sys, "<name>triage</name>") {
		t.Fatalf("after delete:\n%s", sys)
	}

	var bundles api.SkillsBundlesResult
	c.mustCall(api.MethodSkillsBundles, map[string]any{}, &bundles)
	if len(bundles.Bundles) != 3 || bundles.Bundles[0].Alias != "ops" || bundles.Bundles[0].Directory != ops ||
		!slices.Equal(bundles.Bundles[0].Exclude, []string{"restore"}) || bundles.Bundles[2].Directory != filepath.Join(d.ConfigDir, "shared", "skills", "team") {
		t.Fatalf("skills/bundles = %+v", bundles)
	}
}

// Bad skill requests are -32602 with a message saying what was wrong, and nothing is written.
func TestSkillsRefusals(t *testing.T) {
	t.Parallel()
	model := newLLM(t, stream(ctSSE, openAIText(1, 1, "x")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "supervised", skillsExtra)))
	c := dialRC(t, d, "")
	fm := map[string]any{"description": "d"}
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{api.MethodSkillsWrite, map[string]any{"bundle": "nope", "name": "a", "frontmatter": fm}, `skill bundle "nope" is not defined`},
		{api.MethodSkillsWrite, map[string]any{"bundle": "outside", "name": "a", "frontmatter": fm}, "outside <install>/shared/"},
		{api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "../../../x", "frontmatter": fm}, "lowercase letters, digits and hyphens"},
		{api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "a"}, "frontmatter is required"},
		{api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "a", "frontmatter": map[string]any{}}, "description is required"},
		{api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "a", "frontmatter": map[string]any{"name": "b", "description": "d"}}, "differs from name"},
		{api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "a", "frontmatter": fm, "body": strings.Repeat("x", 300<<10)}, "more than 262144"},
		{api.MethodSkillsRead, map[string]any{"bundle": "team", "name": "missing"}, `has no skill "missing"`},
		{api.MethodSkillsDelete, map[string]any{"bundle": "team", "name": "missing"}, `has no skill "missing"`},
		{api.MethodSkillsList, map[string]any{"bundle": "outside"}, "refused"},
	} {
		_, werr := c.call(tc.method, tc.params)
		wantErr(t, tc.method+" "+tc.want, werr, -32602, tc.want)
	}
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "shared", "skills", "team", "a")); !os.IsNotExist(err) {
		t.Fatalf("a refused write left a skill: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "x")); !os.IsNotExist(err) {
		t.Fatalf("a traversal name wrote outside: %v", err)
	}
}

// A bundle directory that is a symlink out of shared/, and a skill directory that is one, are the caller's bad
// path (-32602), not the daemon's failure; skills/list of every bundle skips the symlinked bundle with a warning
// and lists the others.
func TestSkillsSymlinkEscapes(t *testing.T) {
	t.Parallel()
	model := newLLM(t, stream(ctSSE, openAIText(1, 1, "x")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "supervised", skillsExtra)))
	c := dialRC(t, d, "")
	fm := map[string]any{"description": "d"}
	c.mustCall(api.MethodSkillsWrite, map[string]any{"bundle": "ops", "name": "backup", "frontmatter": fm}, nil)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, "stolen"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "stolen", "SKILL.md"), []byte("---\ndescription: s\n---\nsecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	team := filepath.Join(d.ConfigDir, "shared", "skills", "team")
	if err := os.MkdirAll(filepath.Dir(team), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, team); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "stolen"), filepath.Join(d.ConfigDir, "shared", "ops", "restore")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{api.MethodSkillsRead, map[string]any{"bundle": "team", "name": "stolen"}},
		{api.MethodSkillsWrite, map[string]any{"bundle": "team", "name": "planted", "frontmatter": fm}},
		{api.MethodSkillsDelete, map[string]any{"bundle": "team", "name": "stolen"}},
		{api.MethodSkillsList, map[string]any{"bundle": "team"}},
		{api.MethodSkillsRead, map[string]any{"bundle": "ops", "name": "restore"}},
		{api.MethodSkillsWrite, map[string]any{"bundle": "ops", "name": "restore", "frontmatter": fm}},
	} {
		if _, werr := c.call(tc.method, tc.params); werr == nil || werr.Code != -32602 || !strings.Contains(werr.Message, "leads outside <install>/shared/") {
			t.Errorf("%s %v: %+v, want -32602 saying the path leads outside shared/", tc.method, tc.params["name"], werr)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); !os.IsNotExist(err) {
		t.Fatalf("a write through the symlink landed outside: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "stolen", "SKILL.md")); !strings.Contains(string(b), "secret") {
		t.Fatalf("the outside skill was changed: %q", b)
	}
	var list api.SkillsListResult
	c.mustCall(api.MethodSkillsList, map[string]any{}, &list)
	if len(list.Skills) != 1 || list.Skills[0].Bundle != "ops" || list.Skills[0].Name != "backup" {
		t.Fatalf("list of every bundle: %+v", list)
	}
	if len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], `skill bundle "team"`) {
		t.Fatalf("list warnings: %q, want one about bundle team", list.Warnings)
	}
}
