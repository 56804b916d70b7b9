//go:build unix

package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A new database is private from its first byte: the file is created 0600 before SQLite opens it, and SQLite
// gives its -wal and -shm the database file's mode, so no umask makes any of them readable by others even for a
// moment (OpenSQLite's chmod afterwards only repairs files an older build left). The soak run caught `zeroclaw
// doctor` finding a lazily created jobs.db at 0644 between SQLite's create and that chmod.
func TestNewDatabaseIsPrivateFromTheStart(t *testing.T) {
	old := syscall.Umask(0) // the worst umask: SQLite alone would create the files 0666
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "new.db")
	if err := createPrivate(path); err != nil {
		t.Fatal(err)
	}
	// SQLite itself, without OpenSQLite's chmod: the files it creates next to the database take its mode.
	db, err := sql.Open("sqlite", path+"?"+dsnPragmas)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", filepath.Base(p), m)
		}
	}
	// An existing database is left as it is; a symbolic link at the path is not followed.
	if err := createPrivate(path); err != nil {
		t.Errorf("existing file: %v", err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_ = createPrivate(link)
	if _, err := os.Stat(target); err == nil {
		t.Error("createPrivate followed a symbolic link and created its target")
	}
	// And OpenSQLite on a fresh path under umask 0 ends with private files.
	c, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "open.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
}
