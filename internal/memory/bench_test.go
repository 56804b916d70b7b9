package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var benchWords = []string{"rust", "go", "lisbon", "coffee", "compiler", "garden", "piano", "budget", "invoice", "travel",
	"python", "kernel", "recipe", "marathon", "novel", "database", "server", "camera", "bicycle", "vaccine"}

// seedBench fills a fresh brain.db with n memories of two agents in one transaction.
func seedBench(b *testing.B, n int) (*SQLite, string) {
	b.Helper()
	db, err := OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "brain.db"), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	a, _ := db.EnsureAgent(b.Context(), "a")
	other, _ := db.EnsureAgent(b.Context(), "b")
	tx, err := db.w.BeginTx(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ts := stamp(time.Now())
	for i := range n {
		w1, w2, w3 := benchWords[i%len(benchWords)], benchWords[(i/7)%len(benchWords)], benchWords[(i/131)%len(benchWords)]
		agent := a
		if i%2 == 1 {
			agent = other
		}
		if _, err := tx.Exec(`INSERT INTO memories (id, key, content, category, created_at, updated_at, namespace, agent_id)
			VALUES (?, ?, ?, 'core', ?, ?, 'default', ?)`, newUUID(), fmt.Sprintf("fact_%d", i),
			fmt.Sprintf("note %d about %s and %s, also %s", i, w1, w2, w3), ts, ts, agent); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return db, a
}

// BenchmarkRecall100k measures agent-scoped recall (the injection's query path) with 100,000 memories, next to
// the bare FTS5 query it is built on, and reports p50/p99 per call.
func BenchmarkRecall100k(b *testing.B) {
	db, agent := seedBench(b, 100_000)
	query := "what do I know about lisbon coffee?"
	run := func(b *testing.B, f func(ctx context.Context) error) {
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			if err := f(b.Context()); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
	b.Run("recall", func(b *testing.B) {
		run(b, func(ctx context.Context) error {
			out, err := db.Recall(ctx, Query{Text: query, Limit: RecallLimit, Agents: []string{agent}, ExcludeCategory: CategoryConversation})
			if err == nil && len(out) == 0 {
				err = fmt.Errorf("no results")
			}
			return err
		})
	})
	b.Run("bare-fts", func(b *testing.B) {
		run(b, func(ctx context.Context) error {
			rows, err := db.r.QueryContext(ctx, `SELECT rowid, bm25(memories_fts) AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s LIMIT 10`, FTSQuery(query))
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			return rows.Close()
		})
	})
}
