package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// skillsConfig: the echo agent following the shared bundle "team".
const skillsConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"
skill_bundles = ["team"]

[risk_profiles.supervised]
level = "supervised"
workspace_only = true

[skill_bundles.team]
`

// editorScript is an EDITOR that replaces the edited file with content.
func editorScript(t *testing.T, content string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "content")
	if err := os.WriteFile(src, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat '"+src+"' > \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return script
}

// The real binary: skills and personality have CLI commands beside their socket methods: list (with the
// workspace's own skills), show, and edit through $EDITOR.
func TestSkillsAndPersonalityCLI(t *testing.T) {
	t.Parallel()
	h, root := homeWithConfig(t, skillsConfig)
	own := filepath.Join(root, "agents", "default", "workspace", "skills", "deploy", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte("---\nname: deploy\ndescription: Ships the site.\n---\nRun make deploy.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	edit := env(h, "EDITOR="+editorScript(t, "---\nname: release\ndescription: Writes the release notes.\n---\nRead CHANGELOG.md.\n"))
	if out := runOK(t, edit, "", "skills", "edit", "release", "--bundle", "team"); !strings.Contains(out, "wrote skill release of bundle team") {
		t.Fatalf("skills edit: %s", out)
	}
	if out := runOK(t, env(h), "", "skills", "show", "release"); !strings.Contains(out, "Writes the release notes.") || !strings.Contains(out, "Read CHANGELOG.md.") {
		t.Fatalf("skills show of the edited skill:\n%s", out)
	}
	list := runOK(t, env(h), "", "skills", "list")
	for _, want := range []string{`(?m)^deploy\s+workspace\s+default\s+Ships the site\.$`, `(?m)^release\s+team\s+-\s+Writes the release notes\.$`} {
		if !regexp.MustCompile(want).MatchString(list) {
			t.Fatalf("skills list lacks %q:\n%s", want, list)
		}
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(runOK(t, env(h), "", "skills", "list", "--json")), &entries); err != nil || len(entries) != 2 ||
		entries[0]["bundle"] != "workspace" || entries[0]["agent"] != "default" {
		t.Fatalf("skills list --json: %v %v", entries, err)
	}
	if out := runOK(t, env(h), "", "skills", "show", "deploy"); !strings.Contains(out, "Run make deploy.") {
		t.Fatalf("skills show of a workspace skill:\n%s", out)
	}
	wantFail(t, env(h), []string{`no skill "nope"`, "Try: zeroclaw skills list"}, "skills", "show", "nope")

	soul := env(h, "EDITOR="+editorScript(t, "You are terse.\n"))
	if out := runOK(t, soul, "", "personality", "edit", "SOUL.md"); !strings.Contains(out, "wrote SOUL.md of agent default") {
		t.Fatalf("personality edit: %s", out)
	}
	if out := runOK(t, env(h), "", "personality", "show", "SOUL.md"); out != "You are terse.\n" {
		t.Fatalf("personality show: %q", out)
	}
	if out := runOK(t, env(h), "", "personality", "list"); !strings.Contains(out, "SOUL.md") || !strings.Contains(out, "true") {
		t.Fatalf("personality list:\n%s", out)
	}
	wantFail(t, env(h), []string{"not an editable file", "Try: zeroclaw personality list"}, "personality", "show", "NOPE.md")
}
