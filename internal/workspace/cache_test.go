package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func writeAt(t testing.TB, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func names(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name+"="+f.Content)
	}
	return out
}

// Cache.Load gives what Load gives, reads a file again whenever it changed (even within the same size and a
// fresh timestamp), and does not read an unchanged, settled file again.
func TestCacheLoadFollowsEditsAndSkipsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	soul, user := filepath.Join(dir, "SOUL.md"), filepath.Join(dir, "USER.md")
	writeAt(t, soul, "calm", old)
	writeAt(t, user, "Ana", old)
	var c Cache
	if got, want := names(c.Load(dir)), names(Load(dir)); !slices.Equal(got, want) || len(got) != 2 {
		t.Fatalf("Cache.Load = %q, Load = %q", got, want)
	}

	// A settled file is not read again: same size and timestamp put back by hand keep the cached content. (Only
	// a deliberate Chtimes does this; an ordinary write moves the timestamp.)
	writeAt(t, soul, "cool", old)
	if got := names(c.Load(dir)); !slices.Contains(got, "SOUL.md=calm") {
		t.Fatalf("Cache.Load after a same-size, same-time rewrite = %q: the settled file was read again", got)
	}

	// An ordinary edit shows on the next Load, also one of the same size right after another (fresh timestamps
	// are never trusted from the cache).
	if err := os.WriteFile(soul, []byte("wild"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := names(c.Load(dir)); !slices.Contains(got, "SOUL.md=wild") {
		t.Fatalf("after an edit: %q", got)
	}
	if err := os.WriteFile(soul, []byte("tame"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := names(c.Load(dir)); !slices.Contains(got, "SOUL.md=tame") {
		t.Fatalf("after a same-size edit right after the last: %q", got)
	}

	// Blanked, removed, replaced by a symlink, and a new file: the same as Load.
	writeAt(t, user, "   ", time.Now())
	if got := names(c.Load(dir)); slices.ContainsFunc(got, func(s string) bool { return s[:7] == "USER.md" }) {
		t.Fatalf("blank USER.md still shown: %q", got)
	}
	if err := os.Remove(soul); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(user, soul); err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join(dir, "AGENTS.md"), "rules", old)
	if got, want := names(c.Load(dir)), names(Load(dir)); !slices.Equal(got, want) || !slices.Equal(got, []string{"AGENTS.md=rules"}) {
		t.Fatalf("Cache.Load = %q, Load = %q, want only AGENTS.md", got, want)
	}
	if got := c.Load(filepath.Join(dir, "missing")); got != nil {
		t.Fatalf("missing dir: %q", names(got))
	}
}

// A warm cache (every file settled and unchanged) opens nothing: a turn pays one Lstat per identity file. The
// bound is the Lstat's own allocations (path, stat result, the syscall's C string) plus the result slice.
func TestCacheLoadWarmAllocations(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, n := range PromptFiles {
		writeAt(t, filepath.Join(dir, n), "content of "+n, old)
	}
	var c Cache
	if got := len(c.Load(dir)); got != len(PromptFiles) {
		t.Fatalf("Load gave %d files, want %d", got, len(PromptFiles))
	}
	limit := float64(4*len(PromptFiles) + 1)
	if n := testing.AllocsPerRun(50, func() { _ = c.Load(dir) }); n > limit {
		t.Fatalf("a warm Cache.Load made %.0f allocations, want at most %.0f (a re-read or an open crept back in)", n, limit)
	}
}

func BenchmarkCacheLoadWarm(b *testing.B) {
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, n := range PromptFiles {
		writeAt(b, filepath.Join(dir, n), "content of "+n, old)
	}
	var c Cache
	c.Load(dir)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Load(dir)
	}
}
