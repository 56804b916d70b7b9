package skills

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParseFrontmatter(t *testing.T) {
	doc, err := Parse("---\r\nname: code-review\r\ndescription: >-\r\n  Reviews pull\r\n  requests.\r\n\r\n  Twice.\r\n" +
		"version: '1.2'\r\ntags:\r\n  - slash\r\n  - \"ops, infra\"\r\nalways: true\r\nslash_options:\r\n  - name: x\r\n    description: nested\r\n" +
		"metadata: {a: 1}\r\n---\r\n\r\n# Review\r\nLook at the diff.\r\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Frontmatter{Name: "code-review", Description: "Reviews pull requests.\nTwice.", Version: "1.2",
		Tags: []string{"slash", "ops, infra"}, Always: true}
	if !reflect.DeepEqual(doc.Frontmatter, want) || doc.Body != "# Review\nLook at the diff.\n" || !doc.HasFrontmatter {
		t.Fatalf("got %+v body %q", doc.Frontmatter, doc.Body)
	}
	inline, err := Parse("---\nname: \"a\\\"b\"\ndescription: plain text # a comment\ntags: [one, 'two', \"th,ree\"]\n---\nbody")
	if err != nil || inline.Frontmatter.Name != `a"b` || inline.Frontmatter.Description != "plain text" ||
		!slices.Equal(inline.Frontmatter.Tags, []string{"one", "two", "th,ree"}) || inline.Body != "body" {
		t.Fatalf("inline forms: %+v %v", inline, err)
	}
	if d, err := Parse("# Just markdown\nDo things.\n"); err != nil || d.HasFrontmatter || d.Body != "# Just markdown\nDo things.\n" {
		t.Fatalf("no front matter: %+v %v", d, err)
	}
	for name, in := range map[string]string{
		"unclosed":          "---\nname: x\n",
		"no colon":          "---\nname x\n---\n",
		"indent first":      "---\n  name: x\n---\n",
		"twice":             "---\nname: a\nname: b\n---\n",
		"bad always":        "---\nalways: maybe\n---\n",
		"unterminated":      "---\nname: \"abc\n---\n",
		"flow mapping":      "---\nname: {a: b}\n---\n",
		"continuation":      "---\nname: a\n  b\n---\n",
		"bad escape":        "---\nname: \"\\q\"\n---\n",
		"text after quote":  "---\nname: 'a' b\n---\n",
		"too big":           "---\nname: x\n---\n" + strings.Repeat("x", MaxSkillBytes),
		"bad utf8":          "---\nname: \xff\n---\n",
		"tag list mix":      "---\ntags: a\n  - b\n---\n",
		"too many tags":     "---\ntags: [" + strings.Repeat("t,", maxTags) + "t]\n---\n",
		"huge front matter": "---\n" + strings.Repeat("# c\n", maxFrontmatterBytes/4+1) + "---\n",
	} {
		if _, err := Parse(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// FuzzParse feeds hostile SKILL.md text: Parse never panics, and whatever it accepts survives Serialize and a
// second Parse unchanged (the body up to a final newline).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\nbody\n",
		"---\nname: \"x\\ny\"\ndescription: |\n  one\n  two\ntags: [a, 'b']\nalways: yes\n---\n",
		"---\ndescription: >\n  folded\n\n  text\ntags:\n  - t\nslash_options:\n  - name: q\n---\n# H\n",
		"no front matter", "---\n---\n", "---\nname: 'it''s'\n---",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		doc, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if !doc.HasFrontmatter {
			return
		}
		if len(doc.Frontmatter.Tags) == 0 {
			doc.Frontmatter.Tags = nil
		}
		again, err := Parse(Serialize(doc))
		if err != nil {
			t.Fatalf("Serialize output does not parse: %v\n%q", err, Serialize(doc))
		}
		if len(again.Frontmatter.Tags) == 0 {
			again.Frontmatter.Tags = nil
		}
		if !reflect.DeepEqual(again.Frontmatter, doc.Frontmatter) {
			t.Fatalf("front matter changed:\n%+v\n%+v", doc.Frontmatter, again.Frontmatter)
		}
		if strings.TrimSuffix(again.Body, "\n") != strings.TrimSuffix(doc.Body, "\n") {
			t.Fatalf("body changed: %q -> %q", doc.Body, again.Body)
		}
	})
}

// A bundle config as the tests use it: two bundles under shared/, one outside, and an agent opting in.
func testConfig(root string) *config.Config {
	cfg := config.Default()
	cfg.SkillBundles = map[string]config.SkillBundleConfig{
		"team":    {},
		"ops":     {Directory: "shared/ops-skills", Exclude: []string{"deploy"}},
		"escape":  {Directory: filepath.Join(root, "elsewhere")},
		"twin":    {Directory: "shared/ops-skills"},
		"_hidden": {},
	}
	a := cfg.Agents["default"]
	a.SkillBundles = []string{"team", "ops", "escape", "missing"}
	cfg.Agents["default"] = a
	return cfg
}

func TestForAgentOrderFiltersAndAudit(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "agents", "default", "workspace")
	skill := func(dir, name, desc string) {
		mustWrite(t, filepath.Join(dir, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nSteps for "+name+".\n")
	}
	skill(filepath.Join(ws, "skills", "notes"), "notes", "from the workspace")
	skill(filepath.Join(root, "shared", "skills", "team", "notes"), "notes", "shadowed by the workspace")
	skill(filepath.Join(root, "shared", "skills", "team", "review"), "review", "team review")
	skill(filepath.Join(root, "shared", "skills", "team", "scripted"), "scripted", "ships a script")
	mustWrite(t, filepath.Join(root, "shared", "skills", "team", "scripted", "scripts", "run"), "#!/bin/sh\necho hi\n")
	mustWrite(t, filepath.Join(root, "shared", "skills", "team", "plain", "SKILL.md"), "# Plain\n\nFirst real line.\n")
	skill(filepath.Join(root, "shared", "skills", "team", "_draft"), "draft", "underscore directories are not skills")
	skill(filepath.Join(root, "shared", "skills", "team", ".hidden"), "hidden", "dot directories are not skills")
	skill(filepath.Join(root, "shared", "ops-skills", "deploy"), "deploy", "excluded")
	skill(filepath.Join(root, "shared", "ops-skills", "backup"), "backup", "ops backup")
	skill(filepath.Join(root, "elsewhere", "evil"), "evil", "outside shared")
	if err := os.Symlink(filepath.Join(root, "elsewhere", "evil"), filepath.Join(root, "shared", "ops-skills", "linked")); err != nil {
		t.Fatal(err)
	}

	// A bundle directory that is a symlink out of shared/ is not read, though its path looks inside.
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "shared", "skills", "linkbundle")); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(root)
	cfg.SkillBundles["linkbundle"] = config.SkillBundleConfig{}
	a := cfg.Agents["default"]
	a.SkillBundles = append(a.SkillBundles, "linkbundle")
	cfg.Agents["default"] = a
	got, dropped := ForAgent(cfg, root, "default", ws)
	var names []string
	for _, s := range got {
		names = append(names, s.Source+"/"+s.Name+": "+s.Description)
	}
	want := []string{"workspace/notes: from the workspace", "team/plain: First real line.", "team/review: team review", "ops/backup: ops backup"}
	if !slices.Equal(names, want) {
		t.Fatalf("skills\n got %q\nwant %q", names, want)
	}
	if len(dropped) != 2 || !strings.Contains(dropped[0].Reason, "ships a script") || dropped[1].Source != "linkbundle" ||
		!strings.Contains(dropped[1].Reason, "leads outside <install>/shared/") {
		t.Fatalf("dropped %+v", dropped)
	}

	cfg.Skills.AllowScripts = true
	got, _ = ForAgent(cfg, root, "default", ws)
	if len(got) != 5 {
		t.Fatalf("with allow_scripts: %d skills", len(got))
	}

	bundles := Bundles(cfg, root)
	refused := map[string]string{}
	for _, b := range bundles {
		refused[b.Alias] = b.Refused
	}
	if refused["team"] != "" || refused["ops"] != "" || !strings.Contains(refused["escape"], "outside") ||
		!strings.Contains(refused["twin"], "same directory") || refused["_hidden"] == "" {
		t.Fatalf("refusals %q", refused)
	}
}

func TestRenderFullAndCompact(t *testing.T) {
	ws := "/install/agents/a/workspace"
	sk := []Skill{
		{Name: "a<b", Description: `says "hi" & more`, Body: "Do <x>.", Path: ws + "/skills/a/SKILL.md"},
		{Name: "pinned", Description: "always on", Body: "Pinned steps.", Always: true, Path: "/install/shared/skills/t/pinned/SKILL.md"},
	}
	full := Render(sk, false, ws)
	for _, want := range []string{"## Available Skills", "<name>a&lt;b</name>", "<description>says &quot;hi&quot; &amp; more</description>",
		"<location>" + ws + "/skills/a/SKILL.md</location>", "<instruction>Do &lt;x&gt;.</instruction>", "<instruction>Pinned steps.</instruction>"} {
		if !strings.Contains(full, want) {
			t.Fatalf("full lacks %q:\n%s", want, full)
		}
	}
	compact := Render(sk, true, ws)
	if strings.Contains(compact, "Do &lt;x&gt;.") || !strings.Contains(compact, "<instruction>Pinned steps.</instruction>") ||
		!strings.Contains(compact, "<location>skills/a/SKILL.md</location>") || !strings.Contains(compact, "read_skill") {
		t.Fatalf("compact:\n%s", compact)
	}
	if Render(nil, false, ws) != "" {
		t.Fatal("no skills must render nothing")
	}
}

func TestWriteReadDeleteArchives(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	bundles := Bundles(cfg, root)
	team, err := Find(bundles, "team")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Find(bundles, "escape"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("refused bundle: %v", err)
	}
	sh := NewShared(root)
	fm := Frontmatter{Description: "Writes release notes.", Tags: []string{"docs"}, Version: "0.1.0"}
	if err := sh.Write(team, "release-notes", fm, "1. Read the log.\n"); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"scripts", "references", "assets"} {
		if fi, err := os.Stat(filepath.Join(root, "shared", "skills", "team", "release-notes", sub)); err != nil || !fi.IsDir() {
			t.Fatalf("scaffold %s: %v", sub, err)
		}
	}
	doc, err := sh.Read(team, "release-notes")
	fm.Name = "release-notes"
	if err != nil || !reflect.DeepEqual(doc.Frontmatter, fm) || doc.Body != "1. Read the log.\n" {
		t.Fatalf("read back %+v %q %v", doc.Frontmatter, doc.Body, err)
	}
	for _, name := range []string{"../escape", "Caps", "a/b", "", strings.Repeat("a", 65), "-lead"} {
		if err := sh.Write(team, name, fm, ""); !errors.Is(err, ErrInvalid) {
			t.Errorf("write %q: %v", name, err)
		}
	}
	if err := sh.Write(team, "x", Frontmatter{}, ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no description: %v", err)
	}
	if err := sh.Write(team, "x", Frontmatter{Name: "y", Description: "d"}, ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("name mismatch: %v", err)
	}
	now := time.Unix(1_700_000_000, 0)
	first, err := sh.Delete(team, "release-notes", now)
	if err != nil || first != filepath.Join(root, "shared", "skills", "_deleted", "release-notes-1700000000") {
		t.Fatalf("delete: %q %v", first, err)
	}
	if b, err := os.ReadFile(filepath.Join(first, "SKILL.md")); err != nil || !strings.Contains(string(b), "Read the log") {
		t.Fatalf("archived SKILL.md: %q %v", b, err)
	}
	if _, err := sh.Read(team, "release-notes"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read after delete: %v", err)
	}
	if err := sh.Write(team, "release-notes", fm, "v2"); err != nil {
		t.Fatal(err)
	}
	second, err := sh.Delete(team, "release-notes", now)
	if err != nil || second != first+"-2" {
		t.Fatalf("second delete in the same second: %q %v", second, err)
	}
	if _, err := sh.Delete(team, "release-notes", now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing skill: %v", err)
	}
}
