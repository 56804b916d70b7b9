package legacy

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// A kill -9 between the renames of devices.db and its -wal leaves the database in data/ and the -wal in the
// legacy workspace. The next start must reunite them: a WAL sent elsewhere loses every transaction it holds.
// Both orders of the interrupted group move are covered.
func TestMigrateLegacyResumesSplitDevicesDB(t *testing.T) {
	for _, movedFirst := range []string{"devices.db", "devices.db-wal"} {
		t.Run(movedFirst+" already moved", func(t *testing.T) {
			root := t.TempDir()
			l := legacyInstall(t, root)
			ws := Dir(l)
			put(t, filepath.Join(ws, "AGENTS.md"), "be nice\n", 0o644)
			files := map[string]string{"devices.db": "devices", "devices.db-wal": "devices wal", "devices.db-shm": "shm"}
			for name, content := range files {
				dir := ws
				if name == movedFirst {
					dir = l.DataDir
				}
				put(t, filepath.Join(dir, name), content, 0o600)
			}

			r, err := Migrate(l, 2, legacyNow)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Complete() {
				t.Fatalf("resume not complete: %+v", r)
			}
			for name, content := range files {
				if b, err := os.ReadFile(filepath.Join(l.DataDir, name)); err != nil || string(b) != content {
					t.Errorf("data/%s = %q, %v; want %q", name, b, err, content)
				}
				if p := filepath.Join(l.AgentWorkspace("default"), name); exists(p) {
					t.Errorf("%s split from its database into %s", name, p)
				}
			}
		})
	}
}

// A legacy workspace that is a symbolic link is someone else's directory: its entries must not be moved out
// of it, and a "backup" that is only a copy of the link would not be a backup.
func TestMigrateLegacyRefusesSymlinkedWorkspace(t *testing.T) {
	root := t.TempDir()
	l := legacyInstall(t, root)
	foreign := filepath.Join(t.TempDir(), "project")
	populateLegacy(t, foreign)
	if err := os.Symlink(foreign, Dir(l)); err != nil {
		t.Fatal(err)
	}
	before := tree(t, foreign)

	r, err := Migrate(l, 2, legacyNow)
	if !errors.Is(err, ErrSymlink) || r.Complete() || !r.Ran {
		t.Fatalf("%+v, %v; want ErrSymlink", r, err)
	}
	if !equalTrees(t, tree(t, foreign), before) || len(r.Moved) != 0 {
		t.Fatalf("entries of the linked directory moved: %+v", r)
	}
	if fi, err := os.Lstat(Dir(l)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the workspace link is gone: %v", err)
	}
	assertNoBackup(t, root)
}

// When every entry is blocked by a populated target, each start would otherwise copy the whole legacy
// workspace again: an install whose daemon starts often (ephemeral daemons) fills its disk with backups.
func TestMigrateLegacyNoBackupWhenNothingCanMove(t *testing.T) {
	root := t.TempDir()
	l := legacyInstall(t, root)
	ws := Dir(l)
	put(t, filepath.Join(ws, "sessions", "sessions.db"), "old chat db", 0o600)
	put(t, filepath.Join(ws, "AGENTS.md"), "old\n", 0o644)
	put(t, filepath.Join(l.DataDir, "sessions", "sessions.db"), "new chat db", 0o600)
	put(t, filepath.Join(l.AgentWorkspace("default"), "AGENTS.md"), "new\n", 0o644)

	for range 3 {
		r, err := Migrate(l, 2, legacyNow)
		if err != nil {
			t.Fatal(err)
		}
		if r.Complete() || r.Backup != "" || len(r.Moved) != 0 {
			t.Fatalf("%+v; want nothing moved and no backup", r)
		}
		if got, want := names(r.Left), []string{"AGENTS.md", "sessions"}; !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v", got, want)
		}
	}
	assertNoBackup(t, root)
	if b, err := os.ReadFile(filepath.Join(ws, "sessions", "sessions.db")); err != nil || string(b) != "old chat db" {
		t.Fatalf("legacy sessions.db = %q, %v", b, err)
	}
}

// errCrash stands for a kill -9: the step hook panics, so no cleanup of Migrate runs and the files are
// left exactly as the process would leave them.
type errCrash struct{}

// crashAt runs Migrate and "kills" it at the n-th step (1-based); it reports whether the crash happened.
func crashAt(t *testing.T, l install.Layout, n int) bool {
	t.Helper()
	steps := 0
	stepHook = func(string) {
		if steps++; steps == n {
			panic(errCrash{})
		}
	}
	defer func() { stepHook = func(string) {} }()
	crashed := false
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(errCrash); !ok {
					panic(v)
				}
				crashed = true
			}
		}()
		if _, err := Migrate(l, 2, legacyNow); err != nil {
			t.Fatal(err)
		}
	}()
	return crashed
}

// A kill -9 at any step, then a normal start: the user's files all end up at their new place with their
// contents, nothing is left in the legacy workspace, and every directory named legacy-workspace under a
// backup is a complete copy (a copy cut short never carries the final name).
func TestMigrateLegacyCrashAtEveryStep(t *testing.T) {
	for n := 1; ; n++ {
		root := t.TempDir()
		l := legacyInstall(t, root)
		populateLegacy(t, Dir(l))
		want := tree(t, Dir(l))
		if !crashAt(t, l, n) {
			if n < 10 {
				t.Fatalf("only %d steps: the hook is not called", n)
			}
			break
		}
		// After a crash that removed the emptied workspace there is nothing left to do.
		r, err := Migrate(l, 2, legacyNow)
		if err != nil || (r.Ran && !r.Complete()) || exists(Dir(l)) {
			t.Fatalf("crash at step %d, restart: %+v, %v", n, r, err)
		}
		backups, _ := filepath.Glob(filepath.Join(root, "backup-*", "legacy-workspace"))
		if len(backups) == 0 {
			t.Fatalf("crash at step %d: no backup", n)
		}
		// One backup is of the whole workspace; a later one holds what was left, as it was.
		whole := false
		for _, b := range backups {
			bt := tree(t, b)
			whole = whole || maps.Equal(bt, want)
			for rel, v := range bt {
				if want[rel] != v {
					t.Errorf("crash at step %d: %s/%s = %q, want %q", n, b, rel, v, want[rel])
				}
			}
		}
		if !whole {
			t.Fatalf("crash at step %d: no complete backup among %v", n, backups)
		}
		got := map[string]string{}
		for rel, v := range tree(t, root) {
			if strings.HasPrefix(rel, "backup-") || rel == "." || strings.HasPrefix(v, "dir ") {
				continue
			}
			got[rel] = v
		}
		for rel, v := range want {
			if strings.HasPrefix(v, "dir ") {
				continue
			}
			var at string
			first, rest, _ := strings.Cut(rel, string(filepath.Separator))
			second, _, _ := strings.Cut(rest, string(filepath.Separator))
			switch {
			case first == "memory" && (second == "brain.db" || second == "brain.db-wal" || second == "archive"):
				at = filepath.Join("data", rel)
			case first == "memory":
				at = filepath.Join("agents", "default", "workspace", rel)
			case first == "sessions" || first == "state" || first == "devices.db" || first == "devices.db-wal":
				at = filepath.Join("data", rel)
			case first == "skills":
				at = filepath.Join("shared", rel)
			default:
				at = filepath.Join("agents", "default", "workspace", rel)
			}
			if got[at] != v {
				t.Errorf("crash at step %d: %s = %q, want %q", n, at, got[at], v)
			}
		}
	}
}
