package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

// These functions work on a database file by name, from any process, while its owner (a running daemon) may be
// writing it: SQLite's own locking makes each one read a single consistent snapshot of a WAL database. None of
// them ever creates a database: a missing file is an error wrapping fs.ErrNotExist.

// sqliteHeader opens every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// IsDatabase reports whether the regular file at path starts with the SQLite 3 header. A database this process
// has open is one without a look at its bytes (and its -wal and -shm are not): opening and closing its file
// would drop the process's SQLite locks on it (package dbfile).
func IsDatabase(path string) bool {
	if live, main := dbfile.Live(path); live {
		return main
	}
	f, err := dbfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return bytes.Equal(head, sqliteHeader)
}

// existing is one connection to a database opened by name, held (package dbfile) until Close.
type existing struct {
	*sql.DB
	release func()
}

func (e existing) Close() error {
	err := e.DB.Close()
	e.release()
	return err
}

// openExisting opens the database at path without creating it (mode=rw: SQLite needs write access to take its
// WAL locks even to read). It is one connection, closed by the caller.
func openExisting(ctx context.Context, path string) (existing, error) {
	if _, err := os.Stat(path); err != nil {
		return existing{}, fmt.Errorf("store: open %s: %w", path, err)
	}
	release := dbfile.Hold(path)
	c, err := sql.Open("sqlite", "file:"+uriEscape(path)+"?mode=rw&_pragma=busy_timeout(5000)")
	if err != nil {
		release()
		return existing{}, fmt.Errorf("store: open %s: %w", path, err)
	}
	c.SetMaxOpenConns(1)
	if err := c.PingContext(ctx); err != nil {
		_ = c.Close()
		release()
		return existing{}, fmt.Errorf("store: open %s: %w", path, err)
	}
	return existing{DB: c, release: release}, nil
}

// uriEscape escapes the characters that end or escape the path part of an SQLite file: URI.
func uriEscape(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// maxIntegrityRows bounds the problems IntegrityCheck reports: a badly damaged file yields thousands.
const maxIntegrityRows = 20

// IntegrityCheck runs PRAGMA integrity_check on the database at path and returns the problems it reports
// (none for a sound database, at most 20). A file too damaged to be read at all is an error.
func IntegrityCheck(ctx context.Context, path string) ([]string, error) {
	c, err := openExisting(ctx, path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	problems, err := integrityRows(ctx, c)
	if isCorrupt(err) {
		// Damage the check itself trips over (a broken schema or b-tree root) is its finding too.
		return append(problems, err.Error()), nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: integrity check %s: %w", path, err)
	}
	return problems, nil
}

func integrityRows(ctx context.Context, c existing) ([]string, error) {
	rows, err := c.QueryContext(ctx, fmt.Sprintf("PRAGMA integrity_check(%d)", maxIntegrityRows))
	if err != nil {
		return nil, err
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			_ = rows.Close()
			return problems, err
		}
		// A row may hold several lines: the "*** in database main ***" heading, then the problems under it.
		for _, line := range strings.Split(s, "\n") {
			if line = strings.TrimSpace(line); line != "" && line != "ok" && !strings.HasPrefix(line, "*** in database") {
				problems = append(problems, line)
			}
		}
	}
	return problems, errors.Join(rows.Err(), rows.Close())
}

// isCorrupt reports SQLITE_CORRUPT and SQLITE_NOTADB: the file, not the access to it, is broken.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}

// Snapshot writes a consistent copy of the database at src to dest (which must not exist or be empty) with
// VACUUM INTO: one read transaction, so writers of src keep going and the copy is the state of one commit.
// It returns the copy's PRAGMA user_version (its schema version). dest is fsynced.
func Snapshot(ctx context.Context, src, dest string) (schemaVersion int, err error) {
	c, err := openExisting(ctx, src)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "VACUUM INTO ?", dest); err != nil {
		return 0, fmt.Errorf("store: snapshot %s: %w", src, err)
	}
	if err := syncPath(dest); err != nil {
		return 0, fmt.Errorf("store: snapshot %s: %w", src, err)
	}
	d, err := openExisting(ctx, dest)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	if err := d.QueryRowContext(ctx, "PRAGMA user_version").Scan(&schemaVersion); err != nil {
		return 0, fmt.Errorf("store: snapshot %s: read user_version: %w", src, err)
	}
	return schemaVersion, nil
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// Receipt is one row of jsonl_import_receipts: a legacy JSONL source imported into sessions.db (state.md §5).
type Receipt struct {
	SourceName string // X.jsonl
	SessionKey string
	SHA256     string // lowercase hex of the source's bytes
	Len        int64
}

// ImportReceipts reads the JSONL import receipts of the chat database at path (none when the table is absent).
func ImportReceipts(ctx context.Context, path string) ([]Receipt, error) {
	c, err := openExisting(ctx, path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='jsonl_import_receipts'").Scan(&n); err != nil {
		return nil, fmt.Errorf("store: receipts %s: %w", path, err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := c.QueryContext(ctx, "SELECT source_name, session_key, source_hash, source_len FROM jsonl_import_receipts ORDER BY source_name")
	if err != nil {
		return nil, fmt.Errorf("store: receipts %s: %w", path, err)
	}
	var out []Receipt
	for rows.Next() {
		var r Receipt
		if err := rows.Scan(&r.SourceName, &r.SessionKey, &r.SHA256, &r.Len); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: receipts %s: %w", path, err)
		}
		out = append(out, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("store: receipts %s: %w", path, err)
	}
	return out, nil
}

// FileSHA256 returns the lowercase hex SHA-256 of the file at p and its length: what an import receipt records
// of its source (state.md §5), and what a backup manifest records of each file.
func FileSHA256(p string) (string, int64, error) {
	f, err := dbfile.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// FileStats is the space an SQLite database takes: its file, its -wal beside it, and the pages inside the file
// that are free (reusable, or given back by VACUUM).
type FileStats struct {
	FileBytes, WALBytes int64
	PageSize, Pages     int64
	FreePages           int64
}

// Stats reads the sizes of the database at path (PRAGMA page_size, page_count, freelist_count) and of its -wal
// file (0 when there is none).
func Stats(ctx context.Context, path string) (FileStats, error) {
	var st FileStats
	fi, err := os.Stat(path)
	if err != nil {
		return st, fmt.Errorf("store: stats %s: %w", path, err)
	}
	st.FileBytes = fi.Size()
	if wi, err := os.Stat(path + "-wal"); err == nil {
		st.WALBytes = wi.Size()
	}
	c, err := openExisting(ctx, path)
	if err != nil {
		return st, err
	}
	defer c.Close()
	for _, q := range []struct {
		pragma string
		dst    *int64
	}{{"page_size", &st.PageSize}, {"page_count", &st.Pages}, {"freelist_count", &st.FreePages}} {
		if err := c.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(q.dst); err != nil {
			return st, fmt.Errorf("store: stats %s: %s: %w", path, q.pragma, err)
		}
	}
	return st, nil
}
