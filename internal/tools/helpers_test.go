package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// sandbox is a real workspace plus an outside directory, both under t.TempDir().
type sandbox struct {
	ws      string // workspace as given (not necessarily canonical)
	outside string
}

func newSandbox(t *testing.T) sandbox {
	t.Helper()
	root := t.TempDir()
	s := sandbox{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	mustMkdir(t, filepath.Join(s.ws, "sub"))
	mustMkdir(t, filepath.Join(s.ws, "secret"))
	mustMkdir(t, s.outside)
	mustWrite(t, filepath.Join(s.ws, "inside.txt"), "inside")
	mustWrite(t, filepath.Join(s.ws, "secret", "key.txt"), "key")
	mustWrite(t, filepath.Join(s.outside, "outside.txt"), "outside")
	return s
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call builds a Call with args marshalled as JSON.
func call(name string, args map[string]any) Call {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return Call{ID: "tc_1", Name: name, Arguments: raw}
}

func canon(t *testing.T, p string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
