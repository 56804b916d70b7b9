package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A kept directory is kept however the path reaches it: through a link to a directory above it that stays
// inside (os.Root follows it), not only by its own spelling.
func TestRmdirKeepsThroughALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	f := Files{Dir: dir, Keep: []string{"skills"}}
	if err := os.Mkdir(filepath.Join(dir, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(dir, "here")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "abs")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"skills", "here/skills", "here/here/skills/", "abs/skills"} {
		if err := f.Rmdir(p); !errors.Is(err, ErrFsDenied) {
			t.Errorf("Rmdir(%q) = %v, want ErrFsDenied", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "skills")); err != nil {
		t.Fatalf("the kept directory was removed: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "skills", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.Rmdir("here/skills/sub"); err != nil {
		t.Fatalf("what a kept directory holds may go: %v", err)
	}
}

// A path whose absolute form is longer than PATH_MAX is refused before anything is created: os.Root walks a
// path one name at a time, so a 10 KB "a/a/a/..." from one request made a 5000-deep tree that no tool, backup
// or shell handling the install by absolute path can reach (each name was short enough).
func TestMkdirRefusesAPathBeyondPathMax(t *testing.T) {
	dir := t.TempDir()
	f := Files{Dir: dir}
	deep := strings.Repeat("a/", 5000)
	if err := f.Mkdir(deep); !errors.Is(err, ErrFsInvalidPath) || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("Mkdir of a 10 KB path: %v, want ErrFsInvalidPath, too long", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Fatalf("a refused Mkdir created something: %v", err)
	}
	if err := f.Mkdir(strings.Repeat("a/", 100)); err != nil {
		t.Fatalf("a 200-byte path: %v", err)
	}
}
