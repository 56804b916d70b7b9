//go:build unix

package memory

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// brain.db and the -wal and -shm files SQLite makes beside it are private, whatever the umask (the doctor found
// them 0644: the mode was tightened only after the first write had created them).
func TestSQLiteFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "memory", "brain.db")
	db, err := OpenSQLite(t.Context(), path, nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.EnsureAgent(t.Context(), "default"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}
