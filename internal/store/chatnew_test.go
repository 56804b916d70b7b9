package store

import (
	"database/sql"
	"testing"
)

func contents(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

// EnsureSession caches the empty history of a session it creates, so the first turn's history load is not a
// query. The cache must never hide rows: not rows that were there before the metadata row (left by an older
// writer), not another connection's appends after the session was made, not our own appends.
func TestEnsureSessionCachesOnlyATrulyEmptyHistory(t *testing.T) {
	ctx := t.Context()
	s, p := openTestChat(t)

	// A new key: empty, then our appends extend the cached history.
	if _, existed, err := s.EnsureSession(ctx, "new", "a", "", t0); err != nil || existed {
		t.Fatalf("EnsureSession(new) existed=%v err=%v", existed, err)
	}
	if got, err := s.All(ctx, "new"); err != nil || len(got) != 0 {
		t.Fatalf("All(new) = %q, %v; want none", contents(got), err)
	}
	if got := mustAppend(t, s, "new", "user", "one", t0); got != 0 {
		t.Fatalf("first append: index %d", got)
	}
	if got, err := s.All(ctx, "new"); err != nil || len(got) != 1 || got[0].Content != "one" {
		t.Fatalf("All(new) after an append = %q, %v", contents(got), err)
	}

	// Rows with no metadata row (as an older writer could leave): the new metadata row does not make them vanish.
	raw, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `INSERT INTO sessions (session_key, role, content, created_at) VALUES ('orphan', 'user', 'kept', '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	if _, existed, err := s.EnsureSession(ctx, "orphan", "a", "", t0); err != nil || existed {
		t.Fatalf("EnsureSession(orphan) existed=%v err=%v", existed, err)
	}
	if got, err := s.All(ctx, "orphan"); err != nil || len(got) != 1 || got[0].Content != "kept" {
		t.Fatalf("All(orphan) = %q, %v; want the row that was there", contents(got), err)
	}
	if got := mustAppend(t, s, "orphan", "user", "next", t0); got != 1 {
		t.Fatalf("append after the orphan row: index %d, want 1", got)
	}

	// Another connection appends to a session this store just made: the cached empty history is dropped.
	if _, _, err := s.EnsureSession(ctx, "shared", "a", "", t0); err != nil {
		t.Fatal(err)
	}
	other, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, other, "shared", "user", "theirs", t0)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.All(ctx, "shared"); err != nil || len(got) != 1 || got[0].Content != "theirs" {
		t.Fatalf("All(shared) after another connection's append = %q, %v", contents(got), err)
	}
	if got := mustAppend(t, s, "shared", "user", "mine", t0); got != 1 {
		t.Fatalf("our append after theirs: index %d, want 1", got)
	}
}
