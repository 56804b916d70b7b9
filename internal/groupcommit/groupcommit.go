// Package groupcommit commits concurrent write operations on one SQLite database together: whatever is queued
// when the writer becomes free runs in one transaction, each operation in a savepoint of its own, and is made
// durable by one commit.
package groupcommit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// Default bounds of one batch.
const (
	DefaultMaxOps   = 64
	DefaultMaxBytes = 4 << 20
)

// Hooks are run by the goroutine that leads a batch. Both may be nil.
type Hooks struct {
	// Begin runs before the batch's transaction begins (before BEGIN), exactly once per batch.
	Begin func()
	// End runs after the batch's transaction committed (committed is true) or was rolled back, exactly once per
	// batch, after Begin.
	End func(committed bool)
}

// Committer runs write operations on db in group-committed transactions. db should have one connection (the
// writer); the transactions are begun with db.BeginTx, so the driver's transaction lock mode applies.
//
// No operation waits for others to arrive: a batch is whatever was queued while the previous one ran, so a lone
// caller's operation runs in a transaction of its own with no savepoint, as if it called BeginTx itself.
type Committer struct {
	db       *sql.DB
	hooks    Hooks
	maxOps   int
	maxBytes int
	sp       [3]*sql.Stmt // SAVEPOINT, RELEASE, ROLLBACK TO: prepared once

	mu      sync.Mutex // guards the fields below
	queue   []*op
	leading bool // a goroutine is running batches
}

type op struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	size int
	err  error
	done bool      // set by the leader that ran it
	wake chan bool // true: lead; false: done. Buffered (1).
}

// New returns a Committer on db with batches bounded by maxOps operations and maxBytes of operation sizes (at
// least one operation is always taken); values <= 0 mean the defaults. It prepares its savepoint statements on
// db, so it must be called while no transaction holds db's connection.
func New(ctx context.Context, db *sql.DB, maxOps, maxBytes int, hooks Hooks) (*Committer, error) {
	if maxOps <= 0 {
		maxOps = DefaultMaxOps
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	c := &Committer{db: db, hooks: hooks, maxOps: maxOps, maxBytes: maxBytes}
	for i, q := range []string{"SAVEPOINT groupcommit_op", "RELEASE groupcommit_op", "ROLLBACK TO groupcommit_op"} {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("groupcommit: prepare %q: %w", q, err)
		}
		c.sp[i] = st
	}
	return c, nil
}

// Close closes the prepared statements. Operations still running fail.
func (c *Committer) Close() {
	for _, st := range c.sp {
		if st != nil {
			_ = st.Close()
		}
	}
}

// Do runs fn in a write transaction and returns once that transaction committed (nil), or with fn's error (its
// savepoint rolled back: the batch's other operations are not affected), or with the error that failed the
// whole transaction (then nothing of fn's is stored). fn must run its statements on tx with the ctx it is given
// (the batch's, not cancelled by one caller's cancellation): interrupting one statement would roll back every
// operation of the batch. fn may run on another goroutine than Do's caller. size (bytes the operation writes,
// about) bounds the batch. When ctx is done before fn starts, Do returns ctx's error and fn never runs.
func (c *Committer) Do(ctx context.Context, size int, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o := &op{ctx: ctx, fn: fn, size: size, wake: make(chan bool, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, o)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	if !lead {
		lead = <-o.wake
	}
	if lead {
		c.lead(ctx, o)
	}
	return o.err
}

// Queued returns how many operations wait for a batch (those of the batch running are not counted).
func (c *Committer) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// lead runs batches until own has run, then hands the lead to the oldest queued operation's caller (or gives it
// up when none is queued).
func (c *Committer) lead(ctx context.Context, own *op) {
	bctx := context.WithoutCancel(ctx)
	for !own.done {
		c.mu.Lock()
		n, bytes := 0, 0
		for n < len(c.queue) && n < c.maxOps && (n == 0 || bytes+c.queue[n].size <= c.maxBytes) {
			bytes += c.queue[n].size
			n++
		}
		batch := make([]*op, n)
		copy(batch, c.queue)
		rest := copy(c.queue, c.queue[n:])
		clear(c.queue[rest:]) // the array keeps no finished operation alive
		c.queue = c.queue[:rest]
		c.mu.Unlock()
		c.run(bctx, batch)
		for _, o := range batch {
			o.done = true
			if o != own {
				o.wake <- false
			}
		}
	}
	c.mu.Lock()
	if len(c.queue) > 0 {
		c.queue[0].wake <- true
	} else {
		c.leading = false
	}
	c.mu.Unlock()
}

// run runs batch in one transaction and sets each operation's err.
func (c *Committer) run(ctx context.Context, batch []*op) {
	if c.hooks.Begin != nil {
		c.hooks.Begin()
	}
	committed := false
	defer func() {
		if c.hooks.End != nil {
			c.hooks.End(committed)
		}
	}()
	fail := func(err error) {
		for _, o := range batch {
			if o.err == nil {
				o.err = err
			}
		}
	}
	// Operations whose caller gave up before the batch began do not run.
	live := batch[:0:0]
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		live = append(live, o)
	}
	if len(live) == 0 {
		return
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		fail(err)
		return
	}
	if len(live) == 1 {
		// Alone: the transaction is the operation's, as without grouping.
		if err := live[0].fn(ctx, tx); err != nil {
			live[0].err = err
			_ = tx.Rollback()
			return
		}
	} else {
		for _, o := range live {
			if err := c.inSavepoint(ctx, tx, o); err != nil {
				_ = tx.Rollback()
				fail(fmt.Errorf("groupcommit: batch rolled back: %w", err))
				return
			}
		}
		if allFailed(live) {
			_ = tx.Rollback()
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(err)
		return
	}
	committed = true
}

// inSavepoint runs o in a savepoint of tx, setting o.err to its error; the error returned is one that leaves the
// transaction unusable (the savepoint could not be set, released or rolled back).
func (c *Committer) inSavepoint(ctx context.Context, tx *sql.Tx, o *op) error {
	if _, err := tx.StmtContext(ctx, c.sp[0]).ExecContext(ctx); err != nil {
		return err
	}
	if o.err = o.fn(ctx, tx); o.err != nil {
		if _, err := tx.StmtContext(ctx, c.sp[2]).ExecContext(ctx); err != nil {
			return errors.Join(err, o.err)
		}
	}
	_, err := tx.StmtContext(ctx, c.sp[1]).ExecContext(ctx)
	return err
}

func allFailed(ops []*op) bool {
	for _, o := range ops {
		if o.err == nil {
			return false
		}
	}
	return true
}
