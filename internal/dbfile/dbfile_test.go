package dbfile

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// walDB creates a WAL database at dir/name with one committed row and its -wal and -shm on disk, and returns
// its path and the open connection.
func walDB(t *testing.T, dir, name string) (string, *sql.DB) {
	t.Helper()
	p := filepath.Join(dir, name)
	db, err := sql.Open("sqlite", p+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	return p, db
}

func TestHeldDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, _ := walDB(t, dir, "live.db")
	other, _ := walDB(t, dir, "other.db")
	release := Hold(p)
	defer release()

	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path       string
		live, main bool
	}{
		{p, true, true},
		{link, true, true}, // the same file under another name
		{p + "-wal", true, false},
		{p + "-shm", true, false},
		{other, false, false}, // a database no one here holds
		{other + "-wal", false, false},
		{filepath.Join(dir, "missing.db"), false, false},
	} {
		live, main := Live(c.path)
		if live != c.live || main != c.main {
			t.Errorf("Live(%s) = %v, %v; want %v, %v", filepath.Base(c.path), live, main, c.live, c.main)
		}
		f, err := Open(c.path)
		if c.live {
			if !errors.Is(err, ErrLive) {
				t.Errorf("Open(%s): %v, want ErrLive", filepath.Base(c.path), err)
			}
			if f != nil {
				t.Errorf("Open(%s) returned a file", filepath.Base(c.path))
			}
			continue
		}
		if err == nil {
			f.Close()
		}
	}

	// A descriptor opened behind the check is taken over, not handed back.
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Guard(f); !errors.Is(err, ErrLive) {
		t.Fatalf("Guard of a held database: %v", err)
	}
	mu.Lock()
	kept := len(parked) > 0 && parked[len(parked)-1] == f
	mu.Unlock()
	if !kept {
		t.Fatal("the guarded descriptor is not kept open")
	}

	// Released (the last connection closed), the file is an ordinary file again; holds are counted.
	second := Hold(p)
	release()
	release() // a second call does nothing
	if live, _ := Live(p); !live {
		t.Fatal("released by one of two holders, the database is no longer live")
	}
	second()
	g, err := Open(p)
	if err != nil {
		t.Fatalf("Open after the last release: %v", err)
	}
	g.Close()
}
