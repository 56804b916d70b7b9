package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

//go:embed migrations
var migrationsFS embed.FS

// db is one SQLite database file opened with OpenSQLite and migrated: a single-connection writer and a small
// pool of query-only readers.
type db struct {
	path string
	w    *sql.DB // exactly one connection: every write is serialized here
	r    *sql.DB // query_only connections for reads

	stmts map[string]*sql.Stmt // prepared on w at open (prepare); read-only afterwards

	conns *Conns // w and r, closed with the hold on the file
}

// migration is one numbered step. before, when set, runs inside the same transaction ahead of the SQL; it
// exists for changes SQL cannot express idempotently (adding a column only when it is missing).
type migration struct {
	version int
	name    string
	sql     string
	before  func(ctx context.Context, tx *sql.Tx) error
}

// dsnPragmas are the pragmas of every SQLite database of the install (OpenSQLite): a busy timeout (several
// processes may open a file: two daemons of one host, the CLI), WAL, NORMAL sync, foreign keys and a bound on
// the -wal file (WALSizeLimit: each checkpoint that restarts the log truncates a larger file back to it, so one
// large transaction does not leave a WAL of its size on disk for the daemon's life). zcbench's bare loop reads
// this constant from this file.
const dsnPragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
	"&_pragma=foreign_keys(ON)&_pragma=journal_size_limit(8388608)"

// WALSizeLimit is the size a -wal file is truncated back to at each checkpoint that restarts it
// (journal_size_limit in dsnPragmas, which must spell the same number): the default auto-checkpoint runs at 1000
// pages (4 MiB), so the log of small commits stays below this; a larger one is cut back once its checkpoint
// completes.
const WALSizeLimit = 8 << 20

// openDB opens (creating if needed) the database at path with OpenSQLite and applies the migrations in
// migrations/<set> (none when set is ""). hooks are attached to migrations by version.
func openDB(ctx context.Context, p, set string, hooks map[int]func(context.Context, *sql.Tx) error) (*db, error) {
	if p == "" || strings.ContainsAny(p, "?#") {
		return nil, fmt.Errorf("store: open %q: path must be non-empty without '?' or '#': %w", p, ErrInvalid)
	}
	var migs []migration
	if set != "" { // "": a database whose user_version belongs to another schema owner (control_plane.db)
		var err error
		if migs, err = loadMigrations(set, hooks); err != nil {
			return nil, err
		}
	}
	c, err := OpenSQLite(ctx, p, "")
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	d := &db{path: p, w: c.W, r: c.R, conns: c}
	if set != "" {
		if err := d.migrate(ctx, migs); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return d, nil
}

func (d *db) close() error {
	var errs []error
	for _, st := range d.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, d.conns.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close %s: %w", d.path, err)
	}
	return nil
}

// withTx runs fn in one write transaction (BEGIN IMMEDIATE) and commits, or rolls back if fn or the commit
// fails.
func (d *db) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// readTx runs fn in a read transaction, so several queries see one snapshot.
func (d *db) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// loadMigrations reads migrations/<set>/NNNN_name.sql in version order; versions must be 1..n without gaps.
func loadMigrations(set string, hooks map[int]func(context.Context, *sql.Tx) error) ([]migration, error) {
	dir := path.Join("migrations", set)
	entries, err := fs.ReadDir(migrationsFS, dir)
	if err != nil {
		return nil, fmt.Errorf("store: migrations %s: %w", set, err)
	}
	var migs []migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration %s/%s: name must be NNNN_name.sql", set, name)
		}
		body, err := fs.ReadFile(migrationsFS, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("store: migration %s/%s: %w", set, name, err)
		}
		migs = append(migs, migration{version: v, name: name, sql: string(body), before: hooks[v]})
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].version < migs[j].version })
	for i, m := range migs {
		if m.version != i+1 {
			return nil, fmt.Errorf("store: migrations %s: expected version %d, found %s", set, i+1, m.name)
		}
	}
	return migs, nil
}

// migrate applies every migration above PRAGMA user_version, each in its own transaction together with the
// new user_version, so a crash leaves the database at a whole version. A database newer than this binary is
// refused rather than guessed at.
func (d *db) migrate(ctx context.Context, migs []migration) error {
	var cur int
	if err := d.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return fmt.Errorf("store: migrate %s: read user_version: %w", d.path, err)
	}
	if cur > len(migs) {
		return fmt.Errorf("store: migrate %s: schema version %d is newer than this build (%d)", d.path, cur, len(migs))
	}
	for _, m := range migs[cur:] {
		err := d.withTx(ctx, func(tx *sql.Tx) error {
			if m.before != nil {
				if err := m.before(ctx, tx); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			// PRAGMA takes no bound parameters; the version is an int we control.
			_, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.version))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migrate %s: %s: %w", d.path, m.name, err)
		}
	}
	return nil
}

// ensureColumns adds each missing column of table with its declaration. Used for tables an older install
// created with fewer columns.
func ensureColumns(ctx context.Context, tx *sql.Tx, table string, cols [][2]string) error {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			_ = rows.Close()
			return err
		}
		have[n] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, c := range cols {
		if have[c[0]] {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+table+" ADD COLUMN "+c[0]+" "+c[1]); err != nil {
			return fmt.Errorf("add column %s.%s: %w", table, c[0], err)
		}
	}
	return nil
}

// backup writes a consistent copy of the database to dest with VACUUM INTO, which reads one snapshot while
// writers keep going. The copy is made under a temporary name in dest's directory, fsynced and hard-linked into
// place (atomicfile.CreateNoClobberFunc), so dest is either absent or complete and an existing dest, even one
// created meanwhile, is an error and never clobbered.
func (d *db) backup(ctx context.Context, dest string) error {
	if dest == "" || strings.ContainsAny(dest, "?#") {
		return fmt.Errorf("store: backup %q: %w", dest, ErrInvalid)
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("store: backup %s: %w", dest, fs.ErrExist)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return fmt.Errorf("store: backup %s: %w", dest, err)
	}
	// VACUUM INTO accepts an existing empty file: the reserved temp name.
	if err := atomicfile.CreateNoClobberFunc(dest, func(tmp string) error { return d.vacuumInto(ctx, tmp) }); err != nil {
		return fmt.Errorf("store: backup %s: %w", dest, err)
	}
	return nil
}

// vacuumInto runs VACUUM INTO on a connection of its own: the reader pool is query_only, which SQLite
// applies to the output file too, and the writer must stay free for appends during a long copy.
func (d *db) vacuumInto(ctx context.Context, out string) error {
	c, err := sql.Open("sqlite", d.path+"?"+dsnPragmas)
	if err != nil {
		return err
	}
	c.SetMaxOpenConns(1)
	_, err = c.ExecContext(ctx, "VACUUM INTO ?", out)
	return errors.Join(err, c.Close())
}

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so stored timestamps sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// parseTime accepts any RFC 3339 form (upstream rows use "+00:00" and a variable fraction).
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// prepare prepares each query once on the writer connection, for stmt. It runs at open, before any transaction:
// preparing on the one-connection writer pool while a transaction holds its connection would wait forever.
func (d *db) prepare(ctx context.Context, queries ...string) error {
	if d.stmts == nil {
		d.stmts = make(map[string]*sql.Stmt, len(queries))
	}
	for _, q := range queries {
		st, err := d.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("store: prepare %q: %w", q, err)
		}
		d.stmts[q] = st
	}
	return nil
}

// stmt returns query, prepared at open (prepare), bound to tx. database/sql reuses a statement already prepared
// on the transaction's connection (the writer pool has exactly one, and re-prepares on it if it was replaced), so
// a hot write path parses its SQL once per process instead of once per call. A query that was not prepared at
// open is a programming error.
func (d *db) stmt(tx *sql.Tx, ctx context.Context, query string) *sql.Stmt {
	st, ok := d.stmts[query]
	if !ok {
		panic("store: statement not prepared at open: " + query)
	}
	return tx.StmtContext(ctx, st)
}
