package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func openTestChat(t testing.TB) (*ChatStore, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data", "sessions", "sessions.db")
	s, err := OpenChat(context.Background(), p)
	if err != nil {
		t.Fatalf("OpenChat: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, p
}

func mustAppend(t testing.TB, s *ChatStore, key, role, content string, now time.Time) int {
	t.Helper()
	idx, err := s.Append(context.Background(), key, role, content, now)
	if err != nil {
		t.Fatalf("Append(%s): %v", key, err)
	}
	return idx
}

func indices(msgs []Message) []int {
	out := make([]int, len(msgs))
	for i, m := range msgs {
		out[i] = m.Index
	}
	return out
}

func TestAppendAndMessagesPaging(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	for i := range 10 {
		if got := mustAppend(t, s, "k", "user", fmt.Sprintf("m%d", i), t0.Add(time.Duration(i)*time.Second)); got != i {
			t.Fatalf("Append #%d returned index %d", i, got)
		}
	}
	mustAppend(t, s, "other", "user", "noise", t0)

	tests := []struct {
		name             string
		limit, before    int
		wantIdx          []int
		wantStart        int
		wantOlder        bool
		wantTotal        int
		key              string
		wantFirstContent string
	}{
		{"newest page", 3, -1, []int{7, 8, 9}, 7, true, 10, "k", "m7"},
		{"page before 7", 3, 7, []int{4, 5, 6}, 4, true, 10, "k", "m4"},
		{"short first page", 3, 2, []int{0, 1}, 0, false, 10, "k", "m0"},
		{"before 0 is empty", 3, 0, nil, 0, false, 10, "k", ""},
		{"no limit", 0, -1, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, false, 10, "k", "m0"},
		{"before past end means from end", 2, 50, []int{8, 9}, 8, true, 10, "k", "m8"},
		{"unknown session", 5, -1, nil, 0, false, 0, "nope", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, total, start, err := s.Page(ctx, tc.key, tc.limit, tc.before, 0)
			if err != nil {
				t.Fatal(err)
			}
			older := start > 0
			if !slices.Equal(indices(msgs), tc.wantIdx) || total != tc.wantTotal || start != tc.wantStart || older != tc.wantOlder {
				t.Fatalf("got idx=%v total=%d start=%d older=%v; want idx=%v total=%d start=%d older=%v",
					indices(msgs), total, start, older, tc.wantIdx, tc.wantTotal, tc.wantStart, tc.wantOlder)
			}
			if len(msgs) > 0 && msgs[0].Content != tc.wantFirstContent {
				t.Fatalf("first content %q, want %q", msgs[0].Content, tc.wantFirstContent)
			}
		})
	}

	all, err := s.All(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 10 || all[3].Content != "m3" || all[3].Role != "user" || !all[3].CreatedAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("All: %+v", all)
	}
}

func TestEnsureSessionAndAppendUpdateMetadata(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()

	meta, existed, err := s.EnsureSession(ctx, "k", "coder", "", t0)
	if err != nil {
		t.Fatal(err)
	}
	if existed || meta.AgentAlias != "coder" || meta.MessageCount != 0 || meta.State != "idle" || !meta.CreatedAt.Equal(t0) {
		t.Fatalf("first EnsureSession: existed=%v meta=%+v", existed, meta)
	}

	mustAppend(t, s, "k", "user", "hi", t0.Add(time.Minute))
	mustAppend(t, s, "k", "assistant", "hello", t0.Add(2*time.Minute))

	meta, existed, err = s.EnsureSession(ctx, "k", "someone-else", "", t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !existed || meta.AgentAlias != "coder" {
		t.Fatalf("second EnsureSession must keep the row: existed=%v meta=%+v", existed, meta)
	}
	if meta.MessageCount != 2 || !meta.LastActivity.Equal(t0.Add(2*time.Minute)) || !meta.CreatedAt.Equal(t0) {
		t.Fatalf("metadata after two appends: %+v", meta)
	}

	// Append without EnsureSession creates the metadata row.
	mustAppend(t, s, "fresh", "user", "x", t0)
	m2, err := s.Meta(ctx, "fresh")
	if err != nil || m2.MessageCount != 1 || m2.AgentAlias != "" {
		t.Fatalf("Meta(fresh) = %+v, %v", m2, err)
	}

	if _, err := s.Meta(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Meta(missing) err = %v, want ErrNotFound", err)
	}
	if _, err := s.Append(ctx, "", "user", "x", t0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Append with empty key err = %v, want ErrInvalid", err)
	}
}

func TestSetState(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	if _, _, err := s.EnsureSession(ctx, "k", "", "", t0); err != nil {
		t.Fatal(err)
	}
	started := t0.Add(5 * time.Second)
	if err := s.SetState(ctx, "k", "running", "turn-1", &started); err != nil {
		t.Fatal(err)
	}
	m, err := s.Meta(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if m.State != "running" || m.TurnID != "turn-1" || m.TurnStartedAt == nil || !m.TurnStartedAt.Equal(started) {
		t.Fatalf("after running: %+v", m)
	}
	if err := s.SetState(ctx, "k", "idle", "", nil); err != nil {
		t.Fatal(err)
	}
	m, err = s.Meta(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if m.State != "idle" || m.TurnID != "" || m.TurnStartedAt != nil {
		t.Fatalf("after idle: %+v", m)
	}
	if err := s.SetState(ctx, "missing", "idle", "", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetState(missing) err = %v, want ErrNotFound", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	if _, _, err := s.EnsureSession(ctx, "k", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "k", "user", "remember me", t0)
	mustAppend(t, s, "k", "assistant", "I will", t0.Add(time.Second))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "k", "user", "late", t0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close err = %v, want ErrClosed", err)
	}

	s2, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	all, err := s2.All(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Content != "remember me" || all[1].Content != "I will" {
		t.Fatalf("after reopen: %+v", all)
	}
	m, err := s2.Meta(ctx, "k")
	if err != nil || m.MessageCount != 2 || m.AgentAlias != "default" {
		t.Fatalf("meta after reopen: %+v, %v", m, err)
	}
	if idx := mustAppend(t, s2, "k", "user", "again", t0.Add(2*time.Second)); idx != 2 {
		t.Fatalf("index after reopen = %d, want 2", idx)
	}
	var v int
	if err := s2.d.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != 7 {
		t.Fatalf("user_version = %d, %v; want 7", v, err)
	}
	for _, f := range []string{p, p + "-wal"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	fi, err := os.Stat(filepath.Dir(p))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("sessions dir mode %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	var mode string
	if err := s2.d.r.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestConcurrentAppendsKeepIndicesContiguous(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	const workers, each = 8, 25
	var (
		mu   sync.Mutex
		got  []int
		wg   sync.WaitGroup
		errs = make(chan error, workers*each)
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				idx, err := s.Append(ctx, "k", "user", fmt.Sprintf("w%d-%d", w, i), t0)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				got = append(got, idx)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sort.Ints(got)
	for i, v := range got {
		if v != i {
			t.Fatalf("indices not contiguous: position %d holds %d", i, v)
		}
	}
	if len(got) != workers*each {
		t.Fatalf("got %d indices", len(got))
	}
	m, err := s.Meta(ctx, "k")
	if err != nil || m.MessageCount != workers*each {
		t.Fatalf("message_count = %d, %v", m.MessageCount, err)
	}
}

// Append caches each session's row count (rowCounts). The index it returns must stay the row's true position when
// the rows change behind the cache: another connection (a second process on the same file) appending and a delete
// (a JSONL import re-creating a deleted session: internal/store/jsonl's TestAppendIndexExactAfterImportRecreatesSession).
func TestAppendIndexExactWhenRowsChangeBehindTheCache(t *testing.T) {
	ctx := t.Context()
	s, p := openTestChat(t)
	for want := range 3 {
		if got := mustAppend(t, s, "k", "user", "mine", t0); got != want {
			t.Fatalf("append %d: index %d", want, got)
		}
	}
	other, err := OpenChat(ctx, p) // another writer on the same file, as a second process would be
	if err != nil {
		t.Fatal(err)
	}
	for want := 3; want < 5; want++ {
		if got := mustAppend(t, other, "k", "user", "theirs", t0); got != want {
			t.Fatalf("other writer's append: index %d, want %d", got, want)
		}
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustAppend(t, s, "k", "user", "mine again", t0); got != 5 {
		t.Fatalf("append after another connection committed: index %d, want 5 (a stale cached count would say 3)", got)
	}

	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got := mustAppend(t, s, "k", "user", "fresh", t0); got != 0 {
		t.Fatalf("append after delete: index %d, want 0", got)
	}

}

func TestBackupWhileWriting(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	mustAppend(t, s, "k", "user", "before backup", t0)

	stop := make(chan struct{})
	writing := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Go(func() {
		defer func() {
			select {
			case <-writing:
			default:
				close(writing)
			}
		}()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Append(ctx, "k", "user", fmt.Sprintf("during %d", i), t0); err != nil {
				writeErr = err
				return
			}
			if i == 0 {
				close(writing)
			}
		}
	})
	<-writing // the backup starts while the writer is mid-stream
	dest := filepath.Join(filepath.Dir(p), "backup", "sessions-copy.db")
	berr := s.Backup(ctx, dest)
	close(stop)
	wg.Wait()
	if berr != nil {
		t.Fatal(berr)
	}
	if writeErr != nil {
		t.Fatalf("writer failed during backup: %v", writeErr)
	}

	b, err := OpenChat(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	all, err := b.All(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	m, err := b.Meta(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// A consistent snapshot: the counter and the rows agree, and the first message is there.
	if len(all) == 0 || all[0].Content != "before backup" || m.MessageCount != len(all) {
		t.Fatalf("backup inconsistent: %d rows, message_count %d", len(all), m.MessageCount)
	}
	assertIntegrity(t, b.d.w)

	if err := s.Backup(ctx, dest); err == nil {
		t.Fatal("Backup over an existing file must fail")
	}
}

// assertIntegrity runs SQLite's and FTS5's own consistency checks.
func assertIntegrity(t *testing.T, db *sql.DB) {
	t.Helper()
	var res string
	if err := db.QueryRowContext(context.Background(), "PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
	if _, err := db.ExecContext(context.Background(),
		"INSERT INTO sessions_fts(sessions_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Fatalf("FTS integrity-check: %v", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s, p := openTestChat(t)
	if _, err := s.d.w.ExecContext(t.Context(), "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenChat(t.Context(), p); err == nil {
		t.Fatal("OpenChat must refuse a database from a newer schema")
	}
}

func TestOpenRejectsBadPath(t *testing.T) {
	if _, err := OpenChat(t.Context(), filepath.Join(t.TempDir(), "a?b.db")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
}

// BenchmarkAppend measures a durable chat append (ChatStore.Append: the message row, its FTS row through the
// trigger, the metadata upsert, the index) beside the floor: a bare prepared INSERT of the same row into a
// database with the same schema (migrations included, so the FTS trigger fires) and the same pragmas, one
// transaction per row. Compare the two ns/op figures of one run: the issue 16 target is Append >= 0.6x the
// bare loop's rate.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	const msg = "a typical message of a few words"
	b.Run("store", func(b *testing.B) {
		s, _ := openTestChat(b)
		keys := benchKeys()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := s.Append(ctx, keys[i%len(keys)], "user", msg, t0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		s, _ := openTestChat(b)
		keys := benchKeys()
		stmt, err := s.d.w.PrepareContext(ctx, `INSERT INTO sessions (session_key, role, content, created_at) VALUES (?, ?, ?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		defer stmt.Close()
		ts := formatTime(t0)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := stmt.ExecContext(ctx, keys[i%len(keys)], "user", msg, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchKeys() []string {
	keys := make([]string, 16)
	for i := range keys {
		keys[i] = fmt.Sprintf("rpc_bench-%d", i)
	}
	return keys
}

// BeginTurn is EnsureSession, SetState(running) and the prompt's Append in one transaction.
func TestBeginTurnEnsuresMarksRunningAndStoresThePrompt(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	idx, err := s.BeginTurn(ctx, "k", "coder", "alice", "turn-1", t0, "hello")
	if err != nil || idx != 0 {
		t.Fatalf("BeginTurn = %d, %v; want index 0", idx, err)
	}
	m, err := s.Meta(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if m.State != "running" || m.TurnID != "turn-1" || m.TurnStartedAt == nil || !m.TurnStartedAt.Equal(t0) ||
		m.AgentAlias != "coder" || m.Owner != "alice" || m.MessageCount != 1 || !m.CreatedAt.Equal(t0) {
		t.Fatalf("meta after BeginTurn = %+v", m)
	}
	mustAppend(t, s, "k", "assistant", "hi", t0.Add(time.Second))
	if err := s.SetState(ctx, "k", "idle", "", nil); err != nil {
		t.Fatal(err)
	}
	// A second turn: the row is kept (owner and alias unchanged), the prompt gets the next index.
	idx, err = s.BeginTurn(ctx, "k", "other", "bob", "turn-2", t0.Add(time.Minute), "again")
	if err != nil || idx != 2 {
		t.Fatalf("second BeginTurn = %d, %v; want index 2", idx, err)
	}
	if idx := mustAppend(t, s, "k", "assistant", "ok", t0.Add(time.Minute)); idx != 3 {
		t.Fatalf("append after BeginTurn got index %d, want 3", idx)
	}
	m, err = s.Meta(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if m.State != "running" || m.TurnID != "turn-2" || m.AgentAlias != "coder" || m.Owner != "alice" || m.MessageCount != 4 {
		t.Fatalf("meta after the second BeginTurn = %+v", m)
	}
	msgs, err := s.All(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range msgs {
		got = append(got, msg.Role+":"+msg.Content)
	}
	if want := []string{"user:hello", "assistant:hi", "user:again", "assistant:ok"}; !slices.Equal(got, want) {
		t.Fatalf("messages = %q, want %q", got, want)
	}
	// No prompt: the session is ensured and marked running, nothing is appended.
	if idx, err := s.BeginTurn(ctx, "k2", "", "", "turn-3", t0, ""); err != nil || idx != -1 {
		t.Fatalf("BeginTurn without a prompt = %d, %v; want -1", idx, err)
	}
	if m, err := s.Meta(ctx, "k2"); err != nil || m.State != "running" || m.MessageCount != 0 {
		t.Fatalf("k2 meta = %+v, %v", m, err)
	}
	if _, err := s.BeginTurn(ctx, "", "", "", "t", t0, "x"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("BeginTurn with an empty key: err = %v, want ErrInvalid", err)
	}
}

// EndTurn is the turn's last Append and SetState(state) in one transaction.
func TestEndTurnStoresTheAnswerAndTheState(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	if _, err := s.BeginTurn(ctx, "k", "", "", "turn-1", t0, "hello"); err != nil {
		t.Fatal(err)
	}
	idx, err := s.EndTurn(ctx, "k", "assistant", "hi", t0.Add(time.Second), "idle")
	if err != nil || idx != 1 {
		t.Fatalf("EndTurn = %d, %v; want index 1", idx, err)
	}
	m, err := s.Meta(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if m.State != "idle" || m.TurnID != "" || m.TurnStartedAt != nil || m.MessageCount != 2 || !m.LastActivity.Equal(t0.Add(time.Second)) {
		t.Fatalf("meta after EndTurn = %+v", m)
	}
	if idx := mustAppend(t, s, "k", "user", "next", t0.Add(time.Minute)); idx != 2 {
		t.Fatalf("append after EndTurn got index %d, want 2", idx)
	}
	if _, err := s.EndTurn(ctx, "k", "", "x", t0, "idle"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("EndTurn with no role: err = %v, want ErrInvalid", err)
	}
}
