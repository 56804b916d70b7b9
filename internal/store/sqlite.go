package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

// readerConns is the size of the query-only reader pool.
const readerConns = 4

// Conns is one SQLite database file opened the way every database of the install is: a single-connection
// writer whose transactions begin IMMEDIATE and a small pool of query_only readers. WAL lets the readers see a
// consistent snapshot while the writer commits. The file is held (dbfile.Hold) from before the first
// connection until Close.
type Conns struct {
	W *sql.DB // exactly one connection: every write is serialized here
	R *sql.DB // query_only connections for reads

	path    string
	release func() // ends the dbfile hold

	ckMu   sync.Mutex // guards closed; held by a checkpoint pass (CheckpointOpen) while it works on the file
	closed bool
}

// OpenSQLite opens (creating if needed) the database at path: its parent directory is created with mode 0700
// and the file, with its -wal and -shm when they exist, gets mode 0600 (SQLite gives -wal and -shm the mode of
// the database file when it creates them, so the file is tightened before the first write creates them).
// extraPragmas ("_pragma=name(value)&...", may be empty) are added to the common ones. Errors read
// "open <path>: ..." for the caller to prefix with its package.
func OpenSQLite(ctx context.Context, path, extraPragmas string) (*Conns, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open %q: path must be non-empty without '?' or '#': %w", path, ErrInvalid)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	pragmas := dsnPragmas
	if extraPragmas != "" {
		pragmas += "&" + extraPragmas
	}
	// The file exists, private, before SQLite opens it: SQLite would create it under the umask (0644) and the
	// chmod below would close that window only after it; its -wal and -shm take the database file's mode. An
	// empty file is an empty database. The soak run caught doctor finding a lazily created jobs.db at 0644.
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Held before the first connection opens: from then on nothing in this process opens the file but SQLite.
	release := dbfile.Hold(path)
	w, err := sql.Open("sqlite", path+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		release()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	fail := func(err error) (*Conns, error) {
		_ = w.Close()
		release()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Touch the writer first so the file exists in WAL mode before any reader opens it.
	if err := w.PingContext(ctx); err != nil {
		return fail(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && (p == path || !errors.Is(err, fs.ErrNotExist)) {
			return fail(err)
		}
	}
	r, err := sql.Open("sqlite", path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		return fail(err)
	}
	r.SetMaxOpenConns(readerConns)
	r.SetMaxIdleConns(readerConns)
	c := &Conns{W: w, R: r, path: path, release: release}
	register(c)
	return c, nil
}

// createPrivate creates path as an empty 0600 file when it does not exist (an existing file is left as it is,
// a symbolic link is not followed).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// Close closes the readers and the writer and ends the hold on the file. It must be called exactly once.
func (c *Conns) Close() error {
	unregister(c)
	c.ckMu.Lock()
	c.closed = true
	c.ckMu.Unlock()
	err := errors.Join(c.R.Close(), c.W.Close())
	c.release()
	return err
}
