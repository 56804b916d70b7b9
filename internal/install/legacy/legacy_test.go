package legacy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

var legacyNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

const legacyStamp = "backup-20250102T030405"

// legacyInstall is an install root holding a legacy workspace, with the install lock taken as the daemon does.
func legacyInstall(t *testing.T, root string) install.Layout {
	t.Helper()
	l := install.Layout{Root: root, DataDir: filepath.Join(root, "data")}
	lock, err := install.LockInstall(l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Release() })
	return l
}

func put(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // umask-proof
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// populateLegacy writes a legacy workspace with one entry of every destination, several modes and a symlink.
func populateLegacy(t *testing.T, ws string) {
	t.Helper()
	put(t, filepath.Join(ws, "sessions", "sessions.db"), "chat db", 0o600)
	put(t, filepath.Join(ws, "sessions", "u1.jsonl"), `{"role":"user","content":"hi"}`+"\n", 0o640)
	put(t, filepath.Join(ws, "state", "costs.jsonl"), "{}\n", 0o600)
	put(t, filepath.Join(ws, "devices.db"), "devices", 0o600)
	put(t, filepath.Join(ws, "devices.db-wal"), "devices wal", 0o600)
	put(t, filepath.Join(ws, "skills", "bundle", "SKILL.md"), "# skill\n", 0o644)
	put(t, filepath.Join(ws, "AGENTS.md"), "be nice\n", 0o644)
	put(t, filepath.Join(ws, "notes", "todo.txt"), "buy milk\n", 0o600)
	put(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	put(t, filepath.Join(ws, "memory", "brain.db"), "brain", 0o600)
	put(t, filepath.Join(ws, "memory", "brain.db-wal"), "brain wal", 0o600)
	put(t, filepath.Join(ws, "memory", "archive", "2024-12.md"), "old notes\n", 0o600)
	put(t, filepath.Join(ws, "memory", "2025-01-02.md"), "daily notes\n", 0o600)
	mkdir(t, filepath.Join(ws, "notes"), 0o750)
	if err := os.Symlink("AGENTS.md", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2024, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(ws, "AGENTS.md"), old, old); err != nil {
		t.Fatal(err)
	}
}

// tree describes every entry below dir: type, mode bits, mtime of files, content or link target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode())
		case !fi.Mode().IsRegular():
			out[rel] = fmt.Sprintf("special %v", fi.Mode())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %s %q", fi.Mode(), fi.ModTime().UTC().Format(time.RFC3339Nano), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func names(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, filepath.Base(it.From))
	}
	slices.Sort(out)
	return out
}

func TestMigrateLegacyMovesEverything(t *testing.T) {
	root := t.TempDir()
	l := legacyInstall(t, root)
	ws := Dir(l)
	populateLegacy(t, ws)
	before := tree(t, ws)

	r, err := Migrate(l, 2, legacyNow)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Ran || !r.Complete() || len(r.Left) != 0 || len(r.Warnings) != 0 {
		t.Fatalf("report: %+v", r)
	}
	if want := filepath.Join(root, legacyStamp, "legacy-workspace"); r.Backup != want {
		t.Fatalf("backup = %q, want %q", r.Backup, want)
	}
	if got := tree(t, r.Backup); !equalTrees(t, got, before) {
		t.Fatal("the backup is not a faithful copy")
	}
	wantMoved := []string{"2025-01-02.md", "AGENTS.md", "archive", "brain.db", "brain.db-wal", "devices.db", "devices.db-wal",
		"link", "notes", "run.sh", "sessions", "skills", "state"}
	if got := names(r.Moved); !slices.Equal(got, wantMoved) {
		t.Fatalf("moved %v, want %v", got, wantMoved)
	}
	agent := l.AgentWorkspace("default")
	dest := map[string]string{
		"sessions": filepath.Join(l.DataDir, "sessions"), "state": filepath.Join(l.DataDir, "state"),
		"devices.db": filepath.Join(l.DataDir, "devices.db"), "devices.db-wal": filepath.Join(l.DataDir, "devices.db-wal"),
		"skills":        filepath.Join(root, "shared", "skills"),
		"brain.db":      filepath.Join(l.DataDir, "memory", "brain.db"),
		"brain.db-wal":  filepath.Join(l.DataDir, "memory", "brain.db-wal"),
		"archive":       filepath.Join(l.DataDir, "memory", "archive"),
		"2025-01-02.md": filepath.Join(agent, "memory", "2025-01-02.md"),
	}
	for _, m := range r.Moved {
		want, ok := dest[filepath.Base(m.From)]
		if !ok {
			want = filepath.Join(agent, filepath.Base(m.From))
		}
		from := filepath.Join(ws, filepath.Base(m.From))
		if strings.Contains(want, "memory") {
			from = filepath.Join(ws, "memory", filepath.Base(m.From))
		}
		if m.To != want || m.From != from {
			t.Errorf("moved %s -> %s, want -> %s", m.From, m.To, want)
		}
	}
	// Every entry arrived intact (content, mode, mtime, link target) at its new place.
	for rel, desc := range before {
		if rel == "." {
			continue
		}
		top, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if top == "memory" {
			if rest == "" {
				continue
			}
			top, rest, _ = strings.Cut(rest, "/")
		}
		to, ok := dest[top]
		if !ok {
			to = filepath.Join(agent, top)
		}
		if got := tree(t, filepath.Dir(to))[filepath.Join(filepath.Base(to), filepath.FromSlash(rest))]; got != desc {
			t.Errorf("%s at its new place: %q, want %q", rel, got, desc)
		}
	}
	if exists(ws) {
		t.Error("the emptied legacy workspace is still there")
	}
	if !exists(l.InstallLockPath()) {
		t.Error("the install lock file is gone")
	}

	// A second run finds no legacy workspace: nothing happens, no second backup.
	r2, err := Migrate(l, 2, legacyNow.Add(time.Hour))
	if err != nil || r2.Ran || r2.Complete() || r2.Backup != "" {
		t.Fatalf("second run: %+v, %v", r2, err)
	}
	if backups, _ := filepath.Glob(filepath.Join(root, "backup-*")); len(backups) != 1 {
		t.Fatalf("backups after a second run: %v", backups)
	}
}

// equalTrees compares two tree descriptions, naming each difference.
func equalTrees(t *testing.T, got, want map[string]string) bool {
	t.Helper()
	ok := true
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
			ok = false
		}
	}
	for k, g := range got {
		if _, found := want[k]; !found {
			t.Errorf("%s: unexpected %q", k, g)
			ok = false
		}
	}
	return ok
}

func TestMigrateLegacyNeverOverwritesPopulatedTargets(t *testing.T) {
	root := t.TempDir()
	l := legacyInstall(t, root)
	ws := Dir(l)
	populateLegacy(t, ws)
	agent := l.AgentWorkspace("default")
	// Populated targets: a directory with a file, a file, and a companion file of the devices database.
	put(t, filepath.Join(l.DataDir, "sessions", "sessions.db"), "newer chat db", 0o600)
	put(t, filepath.Join(agent, "AGENTS.md"), "mine\n", 0o600)
	put(t, filepath.Join(l.DataDir, "devices.db-wal"), "other wal", 0o600)
	// A populated memory store in data/memory: brain.db and its -wal stay in the legacy memory/ dir.
	put(t, filepath.Join(l.DataDir, "memory", "brain.db"), "newer brain", 0o600)
	// Empty target directories may be replaced.
	mkdir(t, filepath.Join(root, "shared", "skills"), 0o700)
	mkdir(t, filepath.Join(agent, "notes"), 0o700)

	r, err := Migrate(l, 2, legacyNow)
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete() || !r.Ran {
		t.Fatalf("a migration that left entries behind says complete: %+v", r)
	}
	// devices.db goes with its -wal or not at all.
	if got, want := names(r.Left), []string{"AGENTS.md", "brain.db", "brain.db-wal", "devices.db", "devices.db-wal", "sessions"}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	for _, it := range r.Left {
		if it.Reason == "" || !exists(it.From) {
			t.Errorf("left item %+v: no reason, or not in place", it)
		}
	}
	if got, want := names(r.Moved), []string{"2025-01-02.md", "archive", "link", "notes", "run.sh", "skills", "state"}; !slices.Equal(got, want) {
		t.Fatalf("moved %v, want %v", got, want)
	}
	for p, want := range map[string]string{
		filepath.Join(l.DataDir, "sessions", "sessions.db"):           "newer chat db",
		filepath.Join(agent, "AGENTS.md"):                             "mine\n",
		filepath.Join(l.DataDir, "devices.db-wal"):                    "other wal",
		filepath.Join(root, "shared", "skills", "bundle", "SKILL.md"): "# skill\n",
		filepath.Join(agent, "notes", "todo.txt"):                     "buy milk\n",
		filepath.Join(ws, "devices.db"):                               "devices",
		filepath.Join(l.DataDir, "memory", "brain.db"):                "newer brain",
		filepath.Join(ws, "memory", "brain.db-wal"):                   "brain wal",
		filepath.Join(l.DataDir, "memory", "archive", "2024-12.md"):   "old notes\n",
		filepath.Join(agent, "memory", "2025-01-02.md"):               "daily notes\n",
	} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	if exists(filepath.Join(l.DataDir, "devices.db")) {
		t.Error("devices.db was moved without its -wal")
	}

	// The next start retries: same second, so the backup gets a new name and the first one is untouched.
	first := tree(t, filepath.Join(root, legacyStamp))
	if err := os.RemoveAll(filepath.Join(l.DataDir, "sessions")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(agent, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(l.DataDir, "devices.db-wal")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(l.DataDir, "memory", "brain.db")); err != nil {
		t.Fatal(err)
	}
	r2, err := Migrate(l, 2, legacyNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, legacyStamp+"-2", "legacy-workspace"); r2.Backup != want {
		t.Fatalf("second backup = %q, want %q", r2.Backup, want)
	}
	if !equalTrees(t, tree(t, filepath.Join(root, legacyStamp)), first) {
		t.Fatal("the first backup changed")
	}
	if !r2.Complete() || names(r2.Moved) == nil || exists(ws) {
		t.Fatalf("retry: %+v (workspace still there: %v)", r2, exists(ws))
	}
	if got, want := names(r2.Moved), []string{"AGENTS.md", "brain.db", "brain.db-wal", "devices.db", "devices.db-wal", "sessions"}; !slices.Equal(got, want) {
		t.Fatalf("retry moved %v, want %v", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(l.DataDir, "sessions", "sessions.db")); err != nil || string(b) != "chat db" {
		t.Fatalf("sessions.db after retry = %q, %v", b, err)
	}
}

func TestMigrateLegacyNothingToDo(t *testing.T) {
	t.Run("no legacy dir", func(t *testing.T) {
		root := t.TempDir()
		l := legacyInstall(t, root)
		r, err := Migrate(l, 0, legacyNow)
		if err != nil || r.Ran || r.Complete() {
			t.Fatalf("%+v, %v", r, err)
		}
		assertNoBackup(t, root)
	})
	t.Run("workspace is a file", func(t *testing.T) {
		root := t.TempDir()
		l := legacyInstall(t, root)
		put(t, Dir(l), "not a dir", 0o600)
		r, err := Migrate(l, 2, legacyNow)
		if err != nil || r.Ran {
			t.Fatalf("%+v, %v", r, err)
		}
		assertNoBackup(t, root)
	})
	t.Run("schema version 3", func(t *testing.T) {
		root := t.TempDir()
		l := legacyInstall(t, root)
		populateLegacy(t, Dir(l))
		before := tree(t, Dir(l))
		r, err := Migrate(l, 3, legacyNow)
		if err != nil || r.Ran {
			t.Fatalf("%+v, %v", r, err)
		}
		if !equalTrees(t, tree(t, Dir(l)), before) {
			t.Fatal("a current install's workspace dir was touched")
		}
		assertNoBackup(t, root)
	})
}

func assertNoBackup(t *testing.T, root string) {
	t.Helper()
	if backups, _ := filepath.Glob(filepath.Join(root, "backup-*")); len(backups) != 0 {
		t.Fatalf("backups made: %v", backups)
	}
}

func TestMigrateLegacyFailuresMoveNothing(t *testing.T) {
	t.Run("data dir inside the workspace", func(t *testing.T) {
		root := t.TempDir()
		l := install.Layout{Root: root, DataDir: filepath.Join(root, "workspace", "data")}
		populateLegacy(t, Dir(l))
		before := tree(t, Dir(l))
		r, err := Migrate(l, 2, legacyNow)
		if !errors.Is(err, ErrOverlap) || r.Complete() {
			t.Fatalf("%+v, %v; want ErrOverlap", r, err)
		}
		if !equalTrees(t, tree(t, Dir(l)), before) {
			t.Fatal("entries moved")
		}
		assertNoBackup(t, root)
	})
	t.Run("backup fails", func(t *testing.T) {
		// A socket cannot be copied: the backup fails, is removed, and nothing moves.
		root, err := os.MkdirTemp("", "zcl") // socket paths are short
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(root) })
		l := legacyInstall(t, root)
		populateLegacy(t, Dir(l))
		ln, err := net.Listen("unix", filepath.Join(Dir(l), "s.sock"))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		before := tree(t, Dir(l))
		r, err := Migrate(l, 2, legacyNow)
		if err == nil || !strings.HasPrefix(err.Error(), "install: back up legacy workspace") || r.Complete() {
			t.Fatalf("%+v, %v; want a backup error", r, err)
		}
		if len(r.Moved) != 0 || r.Backup != "" || !equalTrees(t, tree(t, Dir(l)), before) {
			t.Fatalf("something moved after a failed backup: %+v", r)
		}
		assertNoBackup(t, root)
	})
}

func TestMigrationReportLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	Report{}.Log(log)
	if buf.Len() != 0 {
		t.Fatalf("an empty report logged %q", buf.String())
	}
	Report{Ran: true, Backup: "/b",
		Moved:    []Item{{From: "/w/a", To: "/d/a"}},
		Left:     []Item{{From: "/w/b", To: "/d/b", Reason: "target exists and is not empty"}},
		Warnings: []string{"fsync /d: boom"},
	}.Log(log)
	out := buf.String()
	for _, want := range []string{
		"level=INFO msg=\"legacy workspace backed up\" component=install backup=/b",
		"level=INFO msg=\"legacy workspace entry moved\" component=install from=/w/a to=/d/a",
		"level=WARN msg=\"legacy workspace entry left in place\" component=install from=/w/b to=/d/b reason=\"target exists and is not empty\"",
		"level=WARN msg=\"fsync /d: boom\" component=install",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// A data dir on another filesystem cannot receive renames: those entries are reported (never copied half-way),
// the rest moves, and later starts do not take a new backup for entries that can never move.
func TestMigrateLegacyDataDirOnAnotherFilesystem(t *testing.T) {
	if sameDevice("/", "/proc") {
		t.Fatal("sameDevice cannot tell / from /proc")
	}
	root := t.TempDir()
	shm, err := os.MkdirTemp("/dev/shm", "zc-legacy")
	if err != nil {
		t.Fatalf("this test needs /dev/shm (a tmpfs) as a second filesystem: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if sameDevice(root, shm) {
		t.Fatalf("this test needs /dev/shm on another filesystem than %s", root)
	}
	l := install.Layout{Root: root, DataDir: filepath.Join(shm, "data")}
	lock, err := install.LockInstall(l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Release() })
	ws := Dir(l)
	put(t, filepath.Join(ws, "sessions", "sessions.db"), "chat db", 0o600)
	put(t, filepath.Join(ws, "AGENTS.md"), "be brief", 0o644)

	r, err := Migrate(l, 2, legacyNow)
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete() || len(r.Left) != 1 || !strings.Contains(r.Left[0].Reason, "another filesystem") {
		t.Fatalf("report %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "sessions", "sessions.db")); err != nil || string(b) != "chat db" {
		t.Fatalf("the blocked source changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(l.AgentWorkspace("default"), "AGENTS.md")); err != nil {
		t.Fatalf("the movable entry did not move: %v", err)
	}
	r2, err := Migrate(l, 2, legacyNow.Add(time.Second))
	if err != nil || r2.Backup != "" {
		t.Fatalf("second start made a backup %q (%v) although nothing can move", r2.Backup, err)
	}
	if backups, _ := filepath.Glob(filepath.Join(root, "backup-*")); len(backups) != 1 {
		t.Fatalf("backups %v, want exactly one", backups)
	}
}
