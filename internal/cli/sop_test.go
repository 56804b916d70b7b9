package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSOPFiles(t *testing.T, dir, toml, md string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SOP.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	if md != "" {
		if err := os.WriteFile(filepath.Join(dir, "SOP.md"), []byte(md), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSopListAndValidate(t *testing.T) {
	env, root := cliEnv(t)
	sops := filepath.Join(root, "shared", "sops")
	out, _, code := runCLI(t, env, "sop", "list")
	if code != 0 || !strings.Contains(out, "no SOPs in "+sops) || !strings.Contains(out, "Try: mkdir -p") {
		t.Fatalf("empty list: %q code %d", out, code)
	}
	writeSOPFiles(t, filepath.Join(sops, "hello"), "[sop]\nname = \"hello\"\ndescription = \"Say hello\"\n[[triggers]]\ntype = \"manual\"\n",
		"## Steps\n1. **Greet** — Greet the operator.\n")
	writeSOPFiles(t, filepath.Join(sops, "broken"), "[sop]\nname = \"broken\"\ndescription = \"d\"\npriority = \"urgent\"\n", "")
	writeSOPFiles(t, filepath.Join(sops, "dangling"), "[sop]\nname = \"dangling\"\ndescription = \"\"\n",
		"# D\n\n## Steps\n\n1. **A** — a\n2. **B** — b\n   - next: 9\n")
	out, _, code = runCLI(t, env, "sop", "list")
	if code != 0 || !strings.Contains(out, "hello") || !strings.Contains(out, "manual") ||
		!strings.Contains(out, "disabled: "+filepath.Join(sops, "broken")) || !strings.Contains(out, `unknown priority "urgent"`) {
		t.Fatalf("list: %q code %d", out, code)
	}
	out, errOut, code := runCLI(t, env, "sop", "validate", filepath.Join(sops, "hello"))
	if code != 0 || !strings.Contains(out, "ok: 1 SOP(s), 0 warning(s)") {
		t.Fatalf("validate hello: %q %q code %d", out, errOut, code)
	}
	out, errOut, code = runCLI(t, env, "sop", "validate")
	if code == 0 {
		t.Fatalf("validate with errors exited 0: %q", out)
	}
	for _, want := range []string{
		filepath.Join(sops, "broken", "SOP.toml") + ":4: error: unknown priority \"urgent\"",
		filepath.Join(sops, "dangling", "SOP.md") + ":6: error: Step 2: next target step 9 does not exist",
		filepath.Join(sops, "dangling", "SOP.toml") + ":1: warning: SOP description is empty",
		filepath.Join(sops, "dangling", "SOP.toml") + ":1: warning: SOP has no triggers defined",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "2 error(s)") || !strings.Contains(errOut, "Try:") {
		t.Fatalf("summary and hint: %q", errOut)
	}
	_, errOut, code = runCLI(t, env, "sop", "validate", filepath.Join(root, "nope"))
	if code == 0 || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "Try: zeroclaw sop validate DIR") {
		t.Fatalf("missing dir: %q code %d", errOut, code)
	}
	_, errOut, code = runCLI(t, env, "sop", "validate", root)
	if code == 0 || !strings.Contains(errOut, "no SOP in") {
		t.Fatalf("no SOPs: %q code %d", errOut, code)
	}
}
