package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// pendingImports fences the session keys of a JSONL import that has not finished (jsonl.PrepareImport through
// Seam.Fence): a call on such a key waits until the import is released, so a client never writes a session the
// import is about to create (the import never merges over existing rows, state.md §5) nor reads it half carried
// over.
type pendingImports struct {
	// mu guards the fields below.
	mu     sync.Mutex
	keys   map[string]chan struct{} // a pending key → the done channel of the import that fences it
	closed chan struct{}            // made by OpenChat, closed by ChatStore.Close: waiters give up with ErrClosed

	// waitHook, when set (tests), is called with the key a call starts to wait for.
	waitHook func(key string)
}

// add fences keys until done is closed. A key another import already fences keeps that import's channel.
func (p *pendingImports) add(keys []string, done chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = make(map[string]chan struct{})
	}
	for _, k := range keys {
		if _, ok := p.keys[k]; !ok {
			p.keys[k] = done
		}
	}
}

// remove drops the keys done fences.
func (p *pendingImports) remove(done chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, d := range p.keys {
		if d == done {
			delete(p.keys, k)
		}
	}
}

func (p *pendingImports) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
}

// await returns once none of keys is fenced by a running import, or with ctx's error, or ErrClosed when the
// store closes meanwhile.
func (p *pendingImports) await(ctx context.Context, op string, keys ...string) error {
	for {
		p.mu.Lock()
		var done chan struct{}
		var key string
		for _, k := range keys {
			if d, ok := p.keys[k]; ok {
				done, key = d, k
				break
			}
		}
		closed, hook := p.closed, p.waitHook
		p.mu.Unlock()
		if done == nil {
			return nil
		}
		if hook != nil {
			hook(key)
		}
		select {
		case <-done:
		case <-closed:
			return fmt.Errorf("store: %s %s: %w", op, key, ErrClosed)
		case <-ctx.Done():
			return fmt.Errorf("store: %s %s: waiting for the legacy jsonl import: %w", op, key, ctx.Err())
		}
	}
}

// ready is check, then, for a call naming a session, a wait while a JSONL import still fences that key.
func (s *ChatStore) ready(ctx context.Context, op, key string, needKey bool) error {
	if err := s.check(op, key, needKey); err != nil {
		return err
	}
	return s.imports.await(ctx, op, key)
}

// Seam is what the JSONL backend and the legacy JSONL import (package internal/store/jsonl) need of a ChatStore
// beyond the Chat interface: they keep their metadata, messages and receipts in its database and fence its
// session keys. Nothing else should use it.
type Seam struct{ s *ChatStore }

// Seam returns the store's seam for package internal/store/jsonl.
func (s *ChatStore) Seam() Seam { return Seam{s} }

// Check fails with ErrClosed once the store is closed and, when needKey, with ErrInvalid for an empty key.
func (sm Seam) Check(op, key string, needKey bool) error { return sm.s.check(op, key, needKey) }

// Fence makes every call of the store on one of keys wait until release is called (later calls of release do
// nothing). A key another fence already holds stays with that one.
func (sm Seam) Fence(keys []string) (release func()) {
	done := make(chan struct{})
	sm.s.imports.add(keys, done)
	var once sync.Once
	return func() {
		once.Do(func() {
			sm.s.imports.remove(done)
			close(done)
		})
	}
}

// SetFenceWaitHook makes every call that starts to wait for a fenced key call hook with the key (tests).
func (sm Seam) SetFenceWaitHook(hook func(key string)) {
	sm.s.imports.mu.Lock()
	sm.s.imports.waitHook = hook
	sm.s.imports.mu.Unlock()
}

// Reader is the store's pool of read connections (each query sees a snapshot).
func (sm Seam) Reader() *sql.DB { return sm.s.d.r }

// Writer is the store's one write connection pool; its transactions begin IMMEDIATE.
func (sm Seam) Writer() *sql.DB { return sm.s.d.w }

// WithTx runs fn in one write transaction and commits, or rolls back if fn or the commit fails.
func (sm Seam) WithTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return sm.s.d.withTx(ctx, fn)
}

// Touch records one more message for key in the metadata only (message_count+1, last_activity=now; the row
// created if missing), for the JSONL backend whose messages are files.
func (sm Seam) Touch(ctx context.Context, key string, now time.Time) error {
	s := sm.s
	if err := s.check("touch", key, true); err != nil {
		return err
	}
	ts := formatTime(now)
	return s.d.withTx(ctx, func(tx *sql.Tx) error {
		_, err := s.d.stmt(tx, ctx, sqlBumpMetadata).ExecContext(ctx, key, ts, ts)
		return err
	})
}

// ImportTx runs fn, which adds rows of session key, in a write transaction on the writer connection with
// synchronous=FULL, so the commit is durable before the caller goes on (synchronous=NORMAL is restored
// afterwards). It holds the message-count cache meanwhile and drops key's count after, so Append's count stays
// in step with the rows fn adds.
func (sm Seam) ImportTx(ctx context.Context, key string, fn func(tx *sql.Tx) error) (err error) {
	s := sm.s
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	defer s.counts.forget(key)
	conn, err := s.d.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous=FULL"); err != nil {
		return err
	}
	defer func() {
		// Restored even if ctx ended: the connection is shared with every later write.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous=NORMAL"); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restore synchronous=NORMAL: %w", rerr))
		}
	}()
	tx, err := conn.BeginTx(ctx, nil) // the writer's DSN makes this BEGIN IMMEDIATE
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// FormatTime is the store's timestamp text: RFC 3339 in UTC with a fixed nine-digit fraction.
func FormatTime(t time.Time) string { return formatTime(t) }

// ParseTime accepts any RFC 3339 form and returns it in UTC.
func ParseTime(s string) (time.Time, error) { return parseTime(s) }

// NullString is s as a nullable column: NULL when s is "".
func NullString(s string) sql.NullString { return nullString(s) }
