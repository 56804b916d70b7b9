package memory

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/groupcommit"
)

// Concurrent Stores (the auto-saves of several sessions' turns, group-committed) are each stored once; one that
// the database refuses (an unknown agent: the foreign key) fails alone with its own error.
func TestSQLiteConcurrentStores(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "memory", "brain.db"), nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.EnsureAgent(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := Record{Key: fmt.Sprintf("user_msg_t%d-%d", w, i), Content: fmt.Sprintf("message %d of %d", i, w),
					Category: CategoryConversation, SessionID: "rpc_s", Now: fixedNow}
				if err := db.Store(t.Context(), id, r); err != nil {
					t.Errorf("%s: %v", r.Key, err)
				}
				if i == each/2 {
					if err := db.Store(t.Context(), "no-such-agent", r); err == nil {
						t.Errorf("a memory of an unknown agent was stored")
					}
				}
			}
		})
	}
	wg.Wait()
	var n, distinct, fts int
	if err := db.w.QueryRowContext(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT key) FROM memories`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != workers*each || distinct != n {
		t.Fatalf("%d memories (%d distinct keys), want %d", n, distinct, workers*each)
	}
	if err := db.w.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'message'`).Scan(&fts); err != nil || fts != n {
		t.Fatalf("FTS rows = %d, %v; want %d", fts, err, n)
	}
	if _, err := db.w.ExecContext(t.Context(), "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Fatalf("FTS integrity-check: %v", err)
	}
}

// BenchmarkStoreConcurrent measures auto-save-sized Stores (a new conversation memory each) from 1, 4 and 16
// goroutines with group commit (group) and one transaction per Store (single: the path before group commit).
// ns/op is per memory.
func BenchmarkStoreConcurrent(b *testing.B) {
	for _, mode := range []string{"single", "group"} {
		for _, g := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", mode, g), func(b *testing.B) {
				db, err := OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "memory", "brain.db"), nowFunc)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				if mode == "single" {
					db.group.Close()
					if db.group, err = groupcommit.New(b.Context(), db.w, 1, 0, groupcommit.Hooks{}); err != nil {
						b.Fatal(err)
					}
				}
				id, err := db.EnsureAgent(b.Context(), "default")
				if err != nil {
					b.Fatal(err)
				}
				var n atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range g {
					wg.Go(func() {
						for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
							r := Record{Key: fmt.Sprintf("user_msg_t%d", i), Content: fmt.Sprintf("w%d a%d go", w, i),
								Category: CategoryConversation, SessionID: fmt.Sprintf("rpc_s%d", w), Now: fixedNow}
							if err := db.Store(b.Context(), id, r); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
			})
		}
	}
}
