package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedSessions stores n attributed sessions in one transaction, last_activity one second apart (every tenth in
// upstream's "+00:00" spelling), and returns the store.
func seedSessions(tb testing.TB, n int) *ChatStore {
	tb.Helper()
	ctx := context.Background()
	s, err := OpenChat(ctx, filepath.Join(tb.TempDir(), "sessions.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	tx, err := s.d.w.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, agent_alias)
		VALUES (?, ?, ?, 0, 'default')`)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		la := formatTime(at)
		if i%10 == 0 {
			la = at.Format("2006-01-02T15:04:05.000000000") + "+00:00"
		}
		if _, err := st.ExecContext(ctx, fmt.Sprintf("rpc_s%06d", i), formatTime(t0), la); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// session/list reads its page through the activity index (no temp B-tree sort of a full scan), and the order is
// by instant across both timestamp spellings, as before the index.
func TestListUsesTheActivityIndex(t *testing.T) {
	s := seedSessions(t, 200)
	ctx := t.Context()
	rows, err := s.d.r.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT "+metaCols+" FROM session_metadata WHERE 1=1"+attributed+listOrder, 20)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	rows.Close()
	joined := strings.Join(plan, "; ")
	if !strings.Contains(joined, "idx_session_metadata_activity") || strings.Contains(joined, "TEMP B-TREE") {
		t.Fatalf("query plan %q: want a walk of idx_session_metadata_activity without a sort", joined)
	}
	page, err := s.ListAttributed(ctx, "", 20)
	if err != nil || len(page) != 20 {
		t.Fatalf("list = %d rows, %v", len(page), err)
	}
	for i, m := range page {
		if want := fmt.Sprintf("rpc_s%06d", 199-i); m.Key != want {
			t.Fatalf("row %d = %s, want %s (newest first, both spellings by instant)", i, m.Key, want)
		}
	}
}

// The cost of a 20-row page at 10k and 100k sessions (BENCHMARKS.md, "Lean and long-running").
func BenchmarkListPage(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := seedSessions(b, n)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if rows, err := s.ListAttributed(ctx, "", 20); err != nil || len(rows) != 20 {
					b.Fatal(len(rows), err)
				}
			}
		})
	}
}
