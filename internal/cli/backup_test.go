package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The backup command says, in one line, that the archive holds .secret_key (the key to every encrypted secret
// of the config), and says nothing of it when the install has none.
func TestBackupOutputNamesSecretKey(t *testing.T) {
	env, root := cliEnv(t)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte("schema_version = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(env.Home, "a.tar.gz")
	out, errOut, code := runCLI(t, env, "backup", archive)
	if code != 0 || strings.Contains(out, ".secret_key") {
		t.Fatalf("backup without a key: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(root, ".secret_key"), []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, env, "backup", filepath.Join(env.Home, "b.tar.gz"))
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, errOut)
	}
	if n := strings.Count(out, "the archive holds .secret_key"); n != 1 {
		t.Fatalf("backup output names .secret_key %d times, want one line:\n%s", n, out)
	}
}
