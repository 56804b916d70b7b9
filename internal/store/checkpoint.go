package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// WALCheckpointAbove is the -wal size from which a checkpoint pass (CheckpointOpen) truncates a database's log.
// Below it the log is left to SQLite's own auto-checkpoint: a WAL of a few pages costs nothing and truncating it
// only makes the next commit grow it again.
const WALCheckpointAbove = 1 << 20

// checkpointBusyMS is how long a checkpoint pass waits for a writer or a reader before it gives up on a
// database until the next pass: short, so a pass never holds up a turn's commit for long.
const checkpointBusyMS = 50

// open is every database this process opened with OpenSQLite and has not closed: what CheckpointOpen walks.
var open = struct {
	mu sync.Mutex // guards m
	m  map[*Conns]struct{}
}{m: map[*Conns]struct{}{}}

func register(c *Conns) {
	open.mu.Lock()
	open.m[c] = struct{}{}
	open.mu.Unlock()
}

func unregister(c *Conns) {
	open.mu.Lock()
	delete(open.m, c)
	open.mu.Unlock()
}

// Checkpoint is the outcome of one database's checkpoint in a pass.
type Checkpoint struct {
	Path                string
	WALBefore, WALAfter int64 // -wal sizes in bytes around the checkpoint
	Busy                bool  // a reader or writer kept the log from being truncated; the next pass retries
}

// CheckpointOpen runs one pass over the databases this process has open: each whose -wal file is larger than
// WALCheckpointAbove gets PRAGMA wal_checkpoint(TRUNCATE) on a connection of its own that waits at most
// checkpointBusyMS for writers and readers. A checkpoint SQLite cannot complete (a reader still reads an old
// snapshot) copies what it can, as a PASSIVE one would, and is reported Busy. Without these passes a WAL that
// grew while a long reader held it stays large until the next write after the reader is gone; an idle daemon
// would keep it for its life. The caller (the daemon) runs a pass every WALCheckpointInterval.
func CheckpointOpen(ctx context.Context) ([]Checkpoint, error) {
	open.mu.Lock()
	list := make([]*Conns, 0, len(open.m))
	for c := range open.m {
		list = append(list, c)
	}
	open.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].path < list[j].path })
	var out []Checkpoint
	var errs []error
	for _, c := range list {
		cp, did, err := c.checkpoint(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		if did {
			out = append(out, cp)
		}
	}
	return out, errors.Join(errs...)
}

// checkpoint truncates c's log when it is past WALCheckpointAbove; did is false when nothing was needed.
func (c *Conns) checkpoint(ctx context.Context) (cp Checkpoint, did bool, err error) {
	c.ckMu.Lock() // Close waits for a checkpoint in flight, and none starts after it
	defer c.ckMu.Unlock()
	if c.closed {
		return cp, false, nil
	}
	cp.Path = c.path
	cp.WALBefore = walBytes(c.path)
	if cp.WALBefore <= WALCheckpointAbove {
		return cp, false, nil
	}
	// A connection of its own: the writer's busy timeout (5 s) would hold appends behind a waiting checkpoint,
	// and the readers are query_only. SQLite shares the file's locks between connections of one process.
	k, err := sql.Open("sqlite", c.path+"?_pragma=busy_timeout("+fmt.Sprint(checkpointBusyMS)+")")
	if err != nil {
		return cp, true, fmt.Errorf("store: checkpoint %s: %w", c.path, err)
	}
	defer k.Close()
	k.SetMaxOpenConns(1)
	var busy, logFrames, done int
	if err := k.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		if !isBusy(err) {
			return cp, true, fmt.Errorf("store: checkpoint %s: %w", c.path, err)
		}
		busy = 1
	}
	cp.Busy = busy != 0
	cp.WALAfter = walBytes(c.path)
	return cp, true, nil
}

func walBytes(p string) int64 {
	fi, err := os.Stat(p + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// isBusy reports SQLITE_BUSY and SQLITE_LOCKED: another connection holds what the statement needed.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}
