package store

import (
	"testing"
	"time"
)

// Session ownership (table session_owners, ours) is written with the session, survives a reopen, is never
// taken over, can be claimed where none is recorded, and goes with the session on delete.
func TestSessionOwners(t *testing.T) {
	ctx := t.Context()
	s, path := openTestChat(t)
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	owner := func(key string) string {
		t.Helper()
		m, err := s.Meta(ctx, key)
		if err != nil {
			t.Fatalf("Meta(%s): %v", key, err)
		}
		return m.Owner
	}
	ownerRows := func(key string) int {
		t.Helper()
		var n int
		if err := s.d.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM session_owners WHERE session_key = ?", key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	meta, existed, err := s.EnsureSession(ctx, "a", "default", "alice", t0)
	if err != nil || existed || meta.Owner != "alice" {
		t.Fatalf("new session: %+v existed=%v %v, want owner alice", meta, existed, err)
	}
	if meta, _, err = s.EnsureSession(ctx, "a", "default", "bob", t0); err != nil || meta.Owner != "alice" {
		t.Fatalf("ensure by another principal: %+v %v, owner must stay alice", meta, err)
	}

	// A session with no recorded owner (upstream's, imported, or older) is claimed by the next EnsureSession.
	mustAppend(t, s, "legacy", "user", "hi", t0)
	if got := owner("legacy"); got != "" {
		t.Fatalf("a session written without an owner reports %q", got)
	}
	if meta, _, err = s.EnsureSession(ctx, "legacy", "", "operator", t0); err != nil || meta.Owner != "operator" {
		t.Fatalf("claim: %+v %v", meta, err)
	}

	// A row left by a session another writer deleted does not carry over to a new session with that key.
	if _, err := s.d.w.ExecContext(ctx, "INSERT INTO session_owners (session_key, principal) VALUES ('stale', 'mallory')"); err != nil {
		t.Fatal(err)
	}
	if meta, _, err = s.EnsureSession(ctx, "stale", "default", "dave", t0); err != nil || meta.Owner != "dave" {
		t.Fatalf("new session over a stale owner row: %+v %v, want dave", meta, err)
	}

	rows, err := s.List(ctx, "", 0)
	if err != nil || len(rows) != 3 {
		t.Fatalf("List: %+v %v", rows, err)
	}
	for _, r := range rows {
		if want := map[string]string{"a": "alice", "legacy": "operator", "stale": "dave"}[r.Key]; r.Owner != want {
			t.Errorf("List row %s owner %q, want %q", r.Key, r.Owner, want)
		}
	}

	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := ownerRows("a"); n != 0 {
		t.Fatalf("delete left %d owner rows", n)
	}
	if meta, _, err = s.EnsureSession(ctx, "a", "default", "bob", t0); err != nil || meta.Owner != "bob" {
		t.Fatalf("recreated after delete: %+v %v, want bob", meta, err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenChat(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := owner("a"); got != "bob" {
		t.Fatalf("after reopen owner %q, want bob", got)
	}
}
