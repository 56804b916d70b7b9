package groupcommit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"
)

// openDB opens a one-connection writer on a fresh WAL database with a table whose CHECK refuses "bad".
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (v TEXT NOT NULL CHECK (v != 'bad'))`); err != nil {
		t.Fatal(err)
	}
	return db
}

func insert(v string) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", v)
		return err
	}
}

func rows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	r, err := db.Query("SELECT v FROM t ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var v string
		if err := r.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// held is a Committer whose batches wait, as they begin, until gate is closed; begun receives one value as
// each batch begins.
type held struct {
	c     *Committer
	gate  chan struct{}
	begun chan struct{}
}

func newHeld(t *testing.T, db *sql.DB, maxOps int) *held {
	t.Helper()
	h := &held{gate: make(chan struct{}), begun: make(chan struct{}, 100)}
	c, err := New(t.Context(), db, maxOps, 0, Hooks{Begin: func() {
		h.begun <- struct{}{}
		<-h.gate
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	h.c = c
	return h
}

// queue starts first, waits until its batch began, then starts the others and waits until they are all queued.
func (h *held) queue(first func(), others ...func()) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(first)
	<-h.begun
	for _, f := range others {
		wg.Go(f)
	}
	for h.c.Queued() != len(others) {
		runtime.Gosched()
	}
	return &wg
}

// An operation that fails in a batch fails alone with its own error; the others of its batch commit, and the
// operations queued behind a running batch are committed together.
func TestFailingOperationFailsAlone(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	h := newHeld(t, db, 0)
	ctx := t.Context()
	errs := make([]error, 5)
	do := func(i int, v string) func() { return func() { errs[i] = h.c.Do(ctx, len(v), insert(v)) } }
	wg := h.queue(do(0, "a"), do(1, "b"), do(2, "bad"), do(3, "c"), do(4, "d"))
	close(h.gate)
	wg.Wait()
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "CHECK constraint failed") {
		t.Fatalf("the refused operation's error = %v", errs[2])
	}
	for i, err := range errs {
		if i != 2 && err != nil {
			t.Fatalf("operation %d failed beside the refused one: %v", i, err)
		}
	}
	if got, want := rows(t, db), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("rows = %q, want %q", got, want)
	}
	if n := len(h.begun); n != 1 {
		t.Fatalf("%d more batches after the first, want 1 (b, bad, c and d together)", n)
	}
}

// A batch takes at most maxOps operations; the rest wait for the next.
func TestBatchBoundedByMaxOps(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	h := newHeld(t, db, 2)
	ctx := t.Context()
	var fns []func()
	for i := range 5 {
		fns = append(fns, func() {
			if err := h.c.Do(ctx, 1, insert(fmt.Sprint(i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg := h.queue(fns[0], fns[1:]...)
	close(h.gate)
	wg.Wait()
	if n := len(rows(t, db)); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
	if n := len(h.begun); n != 2 {
		t.Fatalf("%d batches after the first for 4 queued operations of at most 2, want 2", n)
	}
}

// Operations of many goroutines are all stored exactly once.
func TestConcurrentOperationsStoredOnce(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	c, err := New(t.Context(), db, 0, 0, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if err := c.Do(t.Context(), 1, insert(fmt.Sprintf("%d-%02d", g, i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := rows(t, db)
	if len(got) != 200 || len(slices.Compact(slices.Clone(got))) != 200 {
		t.Fatalf("%d rows (%d distinct), want 200", len(got), len(slices.Compact(slices.Clone(got))))
	}
}

// A caller whose context is done before its batch begins gets the context's error; fn never runs.
func TestCancelledBeforeBatch(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	h := newHeld(t, db, 0)
	cctx, cancel := context.WithCancel(t.Context())
	var cerr error
	wg := h.queue(func() { _ = h.c.Do(t.Context(), 1, insert("a")) }, func() { cerr = h.c.Do(cctx, 1, insert("x")) })
	cancel()
	close(h.gate)
	wg.Wait()
	if !errors.Is(cerr, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", cerr)
	}
	if got := rows(t, db); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("rows = %q", got)
	}
}
