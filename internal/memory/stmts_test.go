package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// A recall prepares its queries once: a second identical recall adds no statement and finds the same rows; the
// cache stays bounded; a closed backend's cache refuses.
func TestRecallReusesPreparedStatements(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.EnsureAgent(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []string{"tea in the morning", "coffee after lunch", "green tea at night"} {
		if err := db.Store(t.Context(), a, Record{Key: fmt.Sprintf("k%d", i), Content: c, Category: "core", Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	q := Query{Text: "tea", Limit: 5, Agents: []string{a}}
	first, err := db.Recall(t.Context(), q)
	if err != nil || len(first) != 2 {
		t.Fatalf("first recall = %d entries, %v; want 2", len(first), err)
	}
	cached := len(db.rs.m)
	if cached == 0 {
		t.Fatalf("no statement cached after a recall")
	}
	second, err := db.Recall(t.Context(), q)
	if err != nil || len(second) != 2 || second[0].Key != first[0].Key || second[1].Key != first[1].Key {
		t.Fatalf("second recall = %+v, %v; want %+v", second, err, first)
	}
	if len(db.rs.m) != cached {
		t.Fatalf("a repeated recall prepared again: %d statements cached, then %d", cached, len(db.rs.m))
	}
	for i := range maxCachedStmts + 5 {
		var n int
		if err := db.rs.QueryRowContext(t.Context(), fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d = %d, %v", i, n, err)
		}
	}
	if len(db.rs.m) > maxCachedStmts {
		t.Fatalf("%d statements cached, want at most %d", len(db.rs.m), maxCachedStmts)
	}
	if got, err := db.Recall(t.Context(), q); err != nil || len(got) != 2 {
		t.Fatalf("recall after the cache started over = %d, %v", len(got), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.rs.QueryContext(t.Context(), "SELECT 1"); err == nil {
		t.Fatalf("query through a closed cache succeeded")
	}
}

// EnsureAgent of an agent already stored reads its id without the writer: a turn's memory handle does not wait
// behind another write (here a transaction holding the one writer connection).
func TestEnsureAgentOfAKnownAgentDoesNotWaitForTheWriter(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	id, err := db.EnsureAgent(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.w.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second) // a guard against a hang
	defer cancel()
	got, err := db.EnsureAgent(ctx, "a")
	_ = tx.Rollback()
	if err != nil || got != id {
		t.Fatalf("EnsureAgent while the writer is busy = %q, %v; want %q", got, err, id)
	}
	other, err := db.EnsureAgent(t.Context(), "b") // a new agent still goes through the writer
	if err != nil || other == "" || other == id {
		t.Fatalf("EnsureAgent(b) = %q, %v", other, err)
	}
	if again, err := db.EnsureAgent(t.Context(), "b"); err != nil || again != other {
		t.Fatalf("EnsureAgent(b) again = %q, %v; want %q", again, err, other)
	}
}
