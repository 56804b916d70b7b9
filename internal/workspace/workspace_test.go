package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Seeding fills missing and blank files, substitutes the placeholders, and leaves user content, symlinks and
// their targets alone; a second seed writes nothing.
func TestSeedNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "SOUL.md"), "I am Nova, and I stay Nova.\n")
	write(t, filepath.Join(dir, "USER.md"), " \n\t\n")
	outside := filepath.Join(t.TempDir(), "target.md")
	write(t, outside, "")
	if err := os.Symlink(outside, filepath.Join(dir, "TOOLS.md")); err != nil {
		t.Fatal(err)
	}
	v := DefaultVars()
	v.Agent, v.User = "nova", "Ada"
	got, err := Seed(dir, v)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"IDENTITY.md", "USER.md", "AGENTS.md", "HEARTBEAT.md", "MEMORY.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("seeded %q, want %q", got, want)
	}
	if s := read(t, filepath.Join(dir, "SOUL.md")); s != "I am Nova, and I stay Nova.\n" {
		t.Fatalf("SOUL.md overwritten: %q", s)
	}
	if s := read(t, outside); s != "" {
		t.Fatalf("symlink target written: %q", s)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "TOOLS.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("TOOLS.md symlink replaced: %v %v", fi, err)
	}
	user := read(t, filepath.Join(dir, "USER.md"))
	if !strings.Contains(user, "**Name:** Ada") || strings.Contains(user, "{") {
		t.Fatalf("USER.md placeholders not filled: %q", user)
	}
	if id := read(t, filepath.Join(dir, "IDENTITY.md")); !strings.Contains(id, "**Name:** nova") {
		t.Fatalf("IDENTITY.md: %q", id)
	}
	if again, err := Seed(dir, v); err != nil || len(again) != 0 {
		t.Fatalf("second seed wrote %q (%v)", again, err)
	}
}

// Without memory, AGENTS.md is the no-memory variant and MEMORY.md is not seeded.
func TestTemplatesWithoutMemory(t *testing.T) {
	cfg := config.Default()
	a := cfg.Agents["default"]
	a.Memory.Backend = "none"
	cfg.Agents["default"] = a
	v := VarsFor(cfg, "default")
	var names []string
	for _, tp := range Templates(v) {
		names = append(names, tp.Name)
		if tp.Name == "AGENTS.md" && !strings.Contains(tp.Content, "no memory backend") {
			t.Fatalf("AGENTS.md is not the no-memory variant: %q", tp.Content)
		}
		if strings.ContainsAny(tp.Content, "{}") {
			t.Fatalf("%s keeps a placeholder: %q", tp.Name, tp.Content)
		}
	}
	if !slices.Equal(names, []string{"SOUL.md", "IDENTITY.md", "USER.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md"}) {
		t.Fatalf("templates %q", names)
	}
	if all := Templates(DefaultVars()); len(all) != len(EditableFiles) {
		t.Fatalf("with memory: %d templates, want %d", len(all), len(EditableFiles))
	}
}

// Load keeps prompt order, skips blank and missing files, cuts at MaxFileChars characters (not bytes) and
// never follows a symlink.
func TestLoadOrderCapAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "MEMORY.md"), "memory")
	write(t, filepath.Join(dir, "BOOTSTRAP.md"), "boot")
	write(t, filepath.Join(dir, "IDENTITY.md"), "  \n")
	long := strings.Repeat("é", MaxFileChars+10)
	write(t, filepath.Join(dir, "SOUL.md"), "\n"+long+"\n")
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "do not read me")
	if err := os.Symlink(secret, filepath.Join(dir, "USER.md")); err != nil {
		t.Fatal(err)
	}
	files := Load(dir)
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"SOUL.md", "BOOTSTRAP.md", "MEMORY.md"}) {
		t.Fatalf("loaded %q", names)
	}
	if !files[0].Truncated || len([]rune(files[0].Content)) != MaxFileChars {
		t.Fatalf("SOUL.md: truncated %v, %d chars", files[0].Truncated, len([]rune(files[0].Content)))
	}
	out := Render(files)
	if !strings.HasPrefix(out, "## Project Context\n\n") || !strings.Contains(out, "### BOOTSTRAP.md\n\nboot\n\n### MEMORY.md\n\nmemory\n\n") ||
		!strings.Contains(out, "[... truncated at 20000 chars") || strings.Contains(out, "do not read me") {
		t.Fatalf("render:\n%s", out[len(out)-300:])
	}
	if Render(nil) != "" {
		t.Fatal("no files must render nothing")
	}
}

// Put refuses names outside the editable set (paths included) and content over the cap, counted in
// characters; at the cap it writes.
func TestPutBounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	for _, name := range []string{"../SOUL.md", "BOOTSTRAP.md", "sub/SOUL.md", "soul.md", ""} {
		if _, err := Put(dir, name, "x"); !errors.Is(err, ErrNotEditable) {
			t.Errorf("Put(%q) = %v, want ErrNotEditable", name, err)
		}
		if _, err := Get(dir, name); !errors.Is(err, ErrNotEditable) {
			t.Errorf("Get(%q) = %v, want ErrNotEditable", name, err)
		}
	}
	if _, err := Put(dir, "SOUL.md", strings.Repeat("ü", MaxFileChars+1)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("over the cap: %v", err)
	}
	at := strings.Repeat("ü", MaxFileChars) // 40,000 bytes, 20,000 characters
	if _, err := Put(dir, "SOUL.md", at); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	c, err := Get(dir, "SOUL.md")
	if err != nil || !c.Exists || c.Text != at || c.Truncated || c.MtimeMS == nil {
		t.Fatalf("get: exists %v truncated %v len %d err %v", c.Exists, c.Truncated, len(c.Text), err)
	}
	if c, err := Get(dir, "USER.md"); err != nil || c.Exists {
		t.Fatalf("missing file: %+v %v", c, err)
	}
}

// A workspace directory comes only from a configured agent.
func TestDirNeedsConfiguredAgent(t *testing.T) {
	cfg := config.Default()
	if _, err := Dir(cfg, "/install", "../../etc"); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("unknown alias: %v", err)
	}
	if d, err := Dir(cfg, "/install", "default"); err != nil || d != "/install/agents/default/workspace" {
		t.Fatalf("default: %q %v", d, err)
	}
}
