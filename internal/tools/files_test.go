package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

func fileEnv(t *testing.T, level Level) (Env, sandbox) {
	t.Helper()
	s := newSandbox(t)
	return Env{Workspace: s.ws, Policy: Policy{Level: level, WorkspaceOnly: true, ForbiddenPaths: []string{"secret"}}}, s
}

func TestFileWriteAtomicInsideSandbox(t *testing.T) {
	t.Parallel()
	env, s := fileEnv(t, LevelSupervised)
	r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "deep/er/note.txt", "content": "v1"}))
	if r.IsError || r.Output != "wrote 2 bytes to deep/er/note.txt" {
		t.Fatalf("write: %+v", r)
	}
	target := filepath.Join(s.ws, "deep", "er", "note.txt")
	if got := mustRead(t, target); got != "v1" {
		t.Fatalf("content = %q", got)
	}

	// Replace: the old inode stays intact behind an open handle (rename, not in-place truncation), the mode
	// is kept, and no temp file is left behind.
	if err := os.Chmod(target, 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	before, _ := old.Stat()
	if r := Execute(t.Context(), env, call("file_write", map[string]any{"path": target, "content": "version 2"})); r.IsError {
		t.Fatalf("rewrite: %+v", r)
	}
	after, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Fatal("file was rewritten in place, not replaced by rename")
	}
	if after.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600 kept", after.Mode().Perm())
	}
	oldContent := make([]byte, 10)
	n, _ := old.ReadAt(oldContent, 0)
	if string(oldContent[:n]) != "v1" || mustRead(t, target) != "version 2" {
		t.Fatalf("old handle sees %q, file has %q", oldContent[:n], mustRead(t, target))
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if len(entries) != 1 {
		t.Fatalf("leftover files: %v", entries)
	}

	// Writing through a symlink that stays inside updates its target and keeps the link.
	mustSymlink(t, "inside.txt", filepath.Join(s.ws, "link.txt"))
	if r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "link.txt", "content": "via link"})); r.IsError {
		t.Fatalf("write via inside link: %+v", r)
	}
	if mustRead(t, filepath.Join(s.ws, "inside.txt")) != "via link" {
		t.Fatal("link target not updated")
	}
	if fi, err := os.Lstat(filepath.Join(s.ws, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}
	if r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "sub", "content": "x"})); !r.IsError || !strings.Contains(r.Output, "is a directory") {
		t.Fatalf("write over a directory: %+v", r)
	}
}

func TestFileWriteEscapesRefused(t *testing.T) {
	t.Parallel()
	env, s := fileEnv(t, LevelFull)
	env.Policy.Level = LevelSupervised // the caller approved; Execute must still refuse high risk
	mustSymlink(t, s.outside, filepath.Join(s.ws, "escape"))
	mustSymlink(t, filepath.Join(s.outside, "fresh.txt"), filepath.Join(s.ws, "dangle"))
	for _, p := range []string{"../outside/x.txt", "escape/x.txt", "escape/new/dir/x.txt", "dangle", filepath.Join(s.outside, "x.txt"), "secret/key.txt", "sub/../secret/new.txt"} {
		r := Execute(t.Context(), env, call("file_write", map[string]any{"path": p, "content": "pwned"}))
		if !r.IsError || !strings.Contains(r.Output, "refused") {
			t.Errorf("write %q: %+v", p, r)
		}
	}
	var found []string
	_ = filepath.Walk(s.outside, func(p string, _ os.FileInfo, _ error) error { found = append(found, p); return nil })
	if len(found) != 2 { // the dir and outside.txt
		t.Fatalf("files appeared outside the workspace: %v", found)
	}
	if mustRead(t, filepath.Join(s.ws, "secret", "key.txt")) != "key" {
		t.Fatal("forbidden file changed")
	}
	env.Policy.Level = LevelReadOnly
	if r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "ok.txt", "content": "x"})); !r.IsError {
		t.Fatalf("readonly write ran: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(s.ws, "ok.txt")); err == nil {
		t.Fatal("readonly write created the file")
	}
	// Under full, an outside path runs even with workspace_only (state.md §2), but forbidden paths never do.
	env.Policy.Level = LevelFull
	if r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "escape/full.txt", "content": "ok"})); r.IsError {
		t.Fatalf("full outside write: %+v", r)
	}
	if mustRead(t, filepath.Join(s.outside, "full.txt")) != "ok" {
		t.Fatal("full outside write missing")
	}
}

func TestFileRead(t *testing.T) {
	t.Parallel()
	env, s := fileEnv(t, LevelReadOnly)
	if r := Execute(t.Context(), env, call("file_read", map[string]any{"path": "inside.txt"})); r.IsError || r.Output != "inside" {
		t.Fatalf("read: %+v", r)
	}
	mustWrite(t, filepath.Join(s.ws, "big.txt"), strings.Repeat("a", 300))
	env.OutputCap = 100
	r := Execute(t.Context(), env, call("file_read", map[string]any{"path": "big.txt"}))
	if r.IsError || r.Output != strings.Repeat("a", 100)+"\n[truncated: showing the first 100 of 300 bytes]" {
		t.Fatalf("capped read: %+v", r)
	}
	mustWrite(t, filepath.Join(s.ws, "bin"), "ab\x00cd")
	for p, want := range map[string]string{"bin": "binary", "sub": "is a directory", "missing.txt": "no such file", "../outside/outside.txt": "refused", "secret/key.txt": "forbidden"} {
		if r := Execute(t.Context(), env, call("file_read", map[string]any{"path": p})); !r.IsError || !strings.Contains(r.Output, want) {
			t.Errorf("read %q: %+v, want error with %q", p, r, want)
		}
	}
	env.Policy.WorkspaceOnly = false
	if r := Execute(t.Context(), env, call("file_read", map[string]any{"path": "../outside/outside.txt"})); r.IsError || r.Output != "outside" {
		t.Fatalf("outside read without workspace_only: %+v", r)
	}
}

func TestFileList(t *testing.T) {
	t.Parallel()
	env, s := fileEnv(t, LevelReadOnly)
	mustWrite(t, filepath.Join(s.ws, "B.txt"), "")
	mustWrite(t, filepath.Join(s.ws, "a.txt"), "")
	r := Execute(t.Context(), env, call("file_list", nil))
	want := []string{"B.txt", "a.txt", "inside.txt", "secret/", "sub/"}
	if r.IsError || !slices.Equal(strings.Split(r.Output, "\n"), want) {
		t.Fatalf("list = %+v, want %v", r, want)
	}
	if r := Execute(t.Context(), env, call("file_list", map[string]any{"path": "sub"})); r.IsError || r.Output != "(empty directory)" {
		t.Fatalf("empty list: %+v", r)
	}
	env.OutputCap = 12
	if r := Execute(t.Context(), env, call("file_list", map[string]any{"path": "."})); r.IsError || r.Output != "B.txt\na.txt\n[truncated: 3 more entries]" {
		t.Fatalf("capped list: %+v", r)
	}
	for p, want := range map[string]string{"inside.txt": "not a directory", "..": "refused", "secret": "forbidden"} {
		if r := Execute(t.Context(), env, call("file_list", map[string]any{"path": p})); !r.IsError || !strings.Contains(r.Output, want) {
			t.Errorf("list %q: %+v, want %q", p, r, want)
		}
	}
}

func TestTimeAndBadCalls(t *testing.T) {
	t.Parallel()
	env, _ := fileEnv(t, LevelReadOnly)
	env.Now = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600)) }
	if r := Execute(t.Context(), env, Call{Name: "time"}); r.IsError || r.Output != "2026-03-04T05:06:07+01:00" {
		t.Fatalf("time: %+v", r)
	}
	for _, c := range []Call{
		{Name: "nope"},
		{Name: "file_read", Arguments: []byte(`{"path":`)},
		{Name: "file_read", Arguments: []byte(`"x"`)},
		{Name: "file_read", Arguments: []byte(`{"path":7}`)},
	} {
		if r := Execute(t.Context(), env, c); !r.IsError || r.Output == "" {
			t.Errorf("%s %s: %+v", c.Name, c.Arguments, r)
		}
	}
}

// A database the daemon has open (here: one registered with dbfile.Hold, as the stores do) is neither read nor
// replaced as a file, nor are its -wal and -shm: closing a descriptor of it would drop the daemon's SQLite locks.
func TestFileToolsRefuseALiveDatabase(t *testing.T) {
	t.Parallel()
	env, s := fileEnv(t, LevelFull)
	db := filepath.Join(s.ws, "live.db")
	mustWrite(t, db, "rows")
	mustWrite(t, db+"-wal", "frames")
	defer dbfile.Hold(db)()
	for _, p := range []string{"live.db", "live.db-wal"} {
		if r := Execute(t.Context(), env, call("file_read", map[string]any{"path": p})); !r.IsError || !strings.Contains(r.Output, "is a database the daemon has open") {
			t.Errorf("file_read %s: %+v", p, r)
		}
	}
	if r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "live.db", "content": "x"})); !r.IsError || !strings.Contains(r.Output, "is a database the daemon has open") {
		t.Errorf("file_write live.db: %+v", r)
	}
	if mustRead(t, db) != "rows" {
		t.Fatal("file_write replaced the live database")
	}
	if r := Execute(t.Context(), env, call("file_read", map[string]any{"path": "inside.txt"})); r.IsError {
		t.Fatalf("an ordinary file: %+v", r)
	}
}
