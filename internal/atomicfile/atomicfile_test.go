package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile/atomicfiletest"
)

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}

func TestWriteFileContentAndPerm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, c := range []struct {
		data string
		perm fs.FileMode
	}{{"first", 0o600}, {"second, longer than the first", 0o640}, {"", 0o604}} {
		if err := atomicfile.WriteFile(path, []byte(c.data), c.perm); err != nil {
			t.Fatal(err)
		}
		if got := readString(t, path); got != c.data {
			t.Fatalf("content %q, want %q", got, c.data)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != c.perm {
			t.Fatalf("mode %o, want %o", fi.Mode().Perm(), c.perm)
		}
	}
	assertNoTemp(t, dir)
}

// The steps a write takes, in order: a skipped fsync or directory sync shows here.
func TestWriteFileSteps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := &atomicfiletest.FaultFS{}
	if err := (atomicfile.Options{FS: fsys, Backup: true}).WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"open tmp", "chmod tmp", "write tmp", "sync tmp", "close tmp",
		"read target", "open bak", "chmod bak", "write bak", "sync bak", "close bak", "syncdir 1", "rename", "syncdir 2"}
	if !slices.Equal(fsys.Steps(), want) {
		t.Fatalf("steps\n got %q\nwant %q", fsys.Steps(), want)
	}
	fsys = &atomicfiletest.FaultFS{}
	if err := (atomicfile.Options{FS: fsys}).WriteFile(path, []byte("newer"), 0o600); err != nil {
		t.Fatal(err)
	}
	want = []string{"open tmp", "chmod tmp", "write tmp", "sync tmp", "close tmp", "rename", "syncdir 1"}
	if !slices.Equal(fsys.Steps(), want) {
		t.Fatalf("steps without backup\n got %q\nwant %q", fsys.Steps(), want)
	}
}

// A failure at any step before the rename leaves the target and its backup as they were and no temp file;
// a failed directory sync after the rename is atomicfile.ErrNotDurable with the new content in place.
func TestWriteFileFailurePoints(t *testing.T) {
	t.Parallel()
	before := []string{"open tmp", "chmod tmp", "write tmp", "sync tmp", "close tmp", "read target", "open bak",
		"chmod bak", "write bak", "sync bak", "close bak", "syncdir 1", "rename"}
	for _, step := range append(before, "syncdir 2") {
		t.Run(strings.ReplaceAll(step, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+".bak", []byte("older"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := (atomicfile.Options{FS: &atomicfiletest.FaultFS{Fail: step}, Backup: true}).WriteFile(path, []byte("new"), 0o600)
			assertNoTemp(t, dir)
			if !errors.Is(err, atomicfiletest.ErrInjected) {
				t.Fatalf("err = %v, want the injected failure", err)
			}
			if step == "syncdir 2" {
				if !errors.Is(err, atomicfile.ErrNotDurable) || readString(t, path) != "new" || readString(t, path+".bak") != "old" {
					t.Fatalf("after rename: err %v, file %q", err, readString(t, path))
				}
				return
			}
			if errors.Is(err, atomicfile.ErrNotDurable) {
				t.Fatalf("failure before the rename reported as atomicfile.ErrNotDurable: %v", err)
			}
			if got := readString(t, path); got != "old" {
				t.Fatalf("target changed to %q", got)
			}
		})
	}
}

func TestWriteFileBackup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	// No previous file: no backup.
	if err := (atomicfile.Options{Backup: true}).WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path + ".bak"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("backup of nothing: %v", err)
	}
	// An older .bak with loose permissions is tightened before it receives the previous content.
	if err := os.WriteFile(path+".bak", []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (atomicfile.Options{Backup: true}).WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if readString(t, path) != "two" || readString(t, path+".bak") != "one" {
		t.Fatalf("file %q, bak %q", readString(t, path), readString(t, path+".bak"))
	}
	if fi, _ := os.Stat(path + ".bak"); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf(".bak mode %o", fi.Mode().Perm())
	}
}

// A symlink at the target is replaced by the file; what it pointed to is not touched.
func TestWriteFileReplacesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "f")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 || readString(t, path) != "new" {
		t.Fatalf("target is %v (%v), content %q", fi.Mode(), err, readString(t, path))
	}
	if readString(t, victim) != "keep" {
		t.Fatal("the symlink was followed")
	}
}

func TestCreateNoClobber(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	if err := atomicfile.CreateNoClobber(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.CreateNoClobber(path, []byte("second"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	if readString(t, path) != "first" {
		t.Fatal("existing file clobbered")
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	assertNoTemp(t, dir)
}

// A symlink at the target, even a dangling one, counts as something there: nothing is created through it.
func TestCreateNoClobberRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	victim := filepath.Join(dir, "victim")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.CreateNoClobber(path, []byte("x"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v, want fs.ErrExist", err)
	}
	if _, err := os.Lstat(victim); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("created through the symlink: %v", err)
	}
	assertNoTemp(t, dir)
}

func TestCreateNoClobberRace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		wg.Go(func() {
			err := atomicfile.CreateNoClobber(path, []byte{byte('a' + i)}, 0o600)
			if err != nil && !errors.Is(err, fs.ErrExist) {
				t.Error(err)
			}
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 || len(readString(t, path)) != 1 {
		t.Fatalf("%d creators won", won)
	}
	assertNoTemp(t, filepath.Dir(path))
}

func TestCreateNoClobberFailurePoints(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"open tmp", "chmod tmp", "write tmp", "sync tmp", "close tmp", "link", "syncdir 1"} {
		t.Run(strings.ReplaceAll(step, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			err := (atomicfile.Options{FS: &atomicfiletest.FaultFS{Fail: step}}).CreateNoClobber(path, []byte("x"), 0o600)
			assertNoTemp(t, dir)
			if !errors.Is(err, atomicfiletest.ErrInjected) {
				t.Fatalf("err = %v", err)
			}
			_, serr := os.Lstat(path)
			if step == "syncdir 1" {
				if !errors.Is(err, atomicfile.ErrNotDurable) || serr != nil {
					t.Fatalf("after link: err %v, stat %v", err, serr)
				}
				return
			}
			if !errors.Is(serr, fs.ErrNotExist) {
				t.Fatalf("file exists after failure at %s", step)
			}
		})
	}
}

func TestCreateNoClobberFunc(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "db.bak")
	var seen string
	err := atomicfile.CreateNoClobberFunc(path, func(tmp string) error {
		seen = tmp
		if filepath.Dir(tmp) != dir {
			t.Errorf("temp %s is not beside the target", tmp)
		}
		return os.WriteFile(tmp, []byte("copy"), 0o600)
	})
	if err != nil || readString(t, path) != "copy" {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Lstat(seen); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp name kept: %v", err)
	}
	// An existing target is refused after fill ran, and the temp goes.
	if err := atomicfile.CreateNoClobberFunc(path, func(tmp string) error { return os.WriteFile(tmp, []byte("other"), 0o600) }); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v", err)
	}
	if readString(t, path) != "copy" {
		t.Fatal("clobbered")
	}
	// A failing fill returns its error and leaves nothing.
	other := filepath.Join(dir, "other")
	if err := atomicfile.CreateNoClobberFunc(other, func(string) error { return atomicfiletest.ErrInjected }); !errors.Is(err, atomicfiletest.ErrInjected) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(other); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("published after a failed fill")
	}
	assertNoTemp(t, dir)
}

// Through Root, names resolve inside the root: a symlinked directory pointing outside cannot be written through.
func TestRootConfinesWrites(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	inside, outside := filepath.Join(base, "in"), filepath.Join(base, "out")
	for _, d := range []string{inside, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(inside)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := atomicfile.Options{FS: atomicfile.Root(r)}
	if err := o.WriteFile("f", []byte("in"), 0o644); err != nil {
		t.Fatal(err)
	}
	if readString(t, filepath.Join(inside, "f")) != "in" {
		t.Fatal("write through the root missed")
	}
	if err := os.Symlink(outside, filepath.Join(inside, "esc")); err != nil {
		t.Fatal(err)
	}
	if err := o.WriteFile(filepath.Join("esc", "f"), []byte("out"), 0o644); err == nil {
		t.Fatal("wrote through a symlink leaving the root")
	}
	if _, err := os.Lstat(filepath.Join(outside, "f")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("file created outside the root")
	}
	assertNoTemp(t, inside)
}

func TestRemoveTemps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	keep := []string{path, filepath.Join(dir, "config.toml.bak"), filepath.Join(dir, ".other.tmp-1"), filepath.Join(dir, ".config.tomlx.tmp-1")}
	stale := []string{filepath.Join(dir, ".config.toml.tmp-0123abcd"), filepath.Join(dir, ".config.toml.tmp-ffff")}
	for _, p := range append(slices.Clone(keep), stale...) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := atomicfile.RemoveTemps(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, stale) {
		t.Fatalf("removed %v, want %v", removed, stale)
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

func TestSyncDir(t *testing.T) {
	t.Parallel()
	if err := atomicfile.SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.SyncDir(filepath.Join(t.TempDir(), "missing"))
	if runtime.GOOS != "windows" && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing dir: %v", err)
	}
	if runtime.GOOS == "windows" && err != nil {
		t.Fatalf("SyncDir must be a no-op here: %v", err)
	}
}
