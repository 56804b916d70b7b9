package store

import (
	"slices"
	"testing"
	"time"
)

// roles renders messages as "role:content" for comparison.
func roles(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+":"+m.Content)
	}
	return out
}

// mustAll is All that fails the test on error.
func mustAll(t *testing.T, s *ChatStore, key string) []Message {
	t.Helper()
	msgs, err := s.All(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// A session's history is read from the database once: All answers from memory afterwards, extended by this
// store's own appends (Append, BeginTurn, EndTurn) exactly as a fresh read would return it. The reader pool is
// closed below to show that no query runs.
func TestAllKeepsAHistoryExtendedByItsOwnAppends(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	if _, err := s.Append(ctx, "k", "user", "one", t0); err != nil {
		t.Fatal(err)
	}
	mustAll(t, s, "k")
	if _, err := s.Append(ctx, "k", "assistant", "two", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginTurn(ctx, "k", "", "", "turn-2", t0.Add(2*time.Second), "three"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndTurn(ctx, "k", "assistant", "four", t0.Add(3*time.Second).Add(123456789), "idle"); err != nil {
		t.Fatal(err)
	}
	fresh, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := mustAll(t, fresh, "k")
	_ = fresh.Close()
	if err := s.d.r.Close(); err != nil {
		t.Fatal(err)
	}
	got := mustAll(t, s, "k")
	if !slices.Equal(got, want) || len(got) != 4 {
		t.Fatalf("cached history\n got %+v\nwant %+v", got, want)
	}
	got[0].Content = "changed by the caller"
	if again := mustAll(t, s, "k"); again[0].Content != "one" {
		t.Fatalf("a caller's change reached the cache: %+v", again)
	}
}

// The cached history is dropped whenever another path could have changed the session: a delete, and a commit
// by another connection (another process: a second store on the file here). The next All reads it fresh.
func TestAllSeesHistoryChangedByAnotherWriter(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	for _, c := range []string{"one", "two"} {
		if _, err := s.Append(ctx, "k", "user", c, t0); err != nil {
			t.Fatal(err)
		}
	}
	if got := roles(mustAll(t, s, "k")); !slices.Equal(got, []string{"user:one", "user:two"}) {
		t.Fatalf("history = %q", got)
	}
	other, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Append(ctx, "k", "assistant", "from elsewhere", t0); err != nil {
		t.Fatal(err)
	}
	if got := roles(mustAll(t, s, "k")); !slices.Equal(got, []string{"user:one", "user:two", "assistant:from elsewhere"}) {
		t.Fatalf("history after another writer's append = %q", got)
	}
	// Our next append after theirs is indexed and cached right.
	if idx, err := s.Append(ctx, "k", "user", "three", t0); err != nil || idx != 3 {
		t.Fatalf("append = %d, %v; want index 3", idx, err)
	}
	if got := roles(mustAll(t, s, "k")); len(got) != 4 || got[3] != "user:three" {
		t.Fatalf("history = %q", got)
	}
	if err := other.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got := mustAll(t, s, "k"); len(got) != 0 {
		t.Fatalf("history after another writer's delete = %+v, want none", got)
	}
	if _, err := s.Append(ctx, "k", "user", "again", t0); err != nil {
		t.Fatal(err)
	}
	mustAll(t, s, "k")
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got := mustAll(t, s, "k"); len(got) != 0 {
		t.Fatalf("history after our delete = %+v, want none", got)
	}
}
