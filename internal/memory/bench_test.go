package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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

// benchRun runs f b.N times and reports the p50 and p99 latency of one call.
func benchRun(b *testing.B, f func(ctx context.Context) error) {
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

// benchQuery is a recall as the injection makes it: the user's words, common ones included.
const benchQuery = "what do I know about lisbon coffee?"

func benchRecall(b Backend, agent string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		out, err := b.Recall(ctx, Query{Text: benchQuery, Limit: RecallLimit, Agents: []string{agent}, ExcludeCategory: CategoryConversation})
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("no results")
		}
		return err
	}
}

// BenchmarkRecall100k measures agent-scoped recall (the injection's query path) with 100,000 memories, next to
// the bare full-text query it is built on, for SQLite and (with ZEROCLAW_TEST_PG_DSN) PostgreSQL, and reports
// p50/p99 per call.
func BenchmarkRecall100k(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		db, agent := seedBench(b, 100_000)
		b.Run("recall", func(b *testing.B) { benchRun(b, benchRecall(db, agent)) })
		b.Run("bare-fts", func(b *testing.B) {
			benchRun(b, func(ctx context.Context) error {
				rows, err := db.r.QueryContext(ctx, `SELECT rowid, bm25(memories_fts) AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s LIMIT 10`, FTSQuery(benchQuery))
				if err != nil {
					return err
				}
				for rows.Next() {
				}
				return rows.Close()
			})
		})
	})
	dsn := pgDSN(b)
	if dsn == "" {
		b.Log("ZEROCLAW_TEST_PG_DSN not set: no PostgreSQL numbers (source scripts/pg-test-server.sh)")
		return
	}
	b.Run("postgres", func(b *testing.B) {
		p, agent := seedBenchPostgres(b, dsn, 100_000)
		b.Run("recall", func(b *testing.B) { benchRun(b, benchRecall(p, agent)) })
		b.Run("bare-fts", func(b *testing.B) {
			benchRun(b, func(ctx context.Context) error {
				var args pgArgs
				tsq := tsQuery(benchQuery, &args)
				_, err := p.pool.Query(ctx, `SELECT id, ts_rank_cd(to_tsvector('simple', content), `+tsq+`) AS s FROM `+p.table+`
					WHERE to_tsvector('simple', content) @@ `+tsq+` ORDER BY s DESC LIMIT 10`, args...)
				return err
			})
		})
	})
}

// seedBenchPostgres fills a fresh schema with the rows seedBench writes, with COPY.
func seedBenchPostgres(b *testing.B, dsn string, n int) (*Postgres, string) {
	b.Helper()
	p := openTestPostgres(b, dsn)
	a, _ := p.EnsureAgent(b.Context(), "a")
	other, _ := p.EnsureAgent(b.Context(), "b")
	now := time.Now()
	rows := make([][]any, n)
	for i := range n {
		w1, w2, w3 := benchWords[i%len(benchWords)], benchWords[(i/7)%len(benchWords)], benchWords[(i/131)%len(benchWords)]
		agent := a
		if i%2 == 1 {
			agent = other
		}
		rows[i] = []any{newUUID(), fmt.Sprintf("fact_%d", i), fmt.Sprintf("note %d about %s and %s, also %s", i, w1, w2, w3),
			"core", now, now, "default", agent}
	}
	schema, table, _ := strings.Cut(strings.ReplaceAll(p.table, `"`, ""), ".")
	conn, err := pgx.Connect(b.Context(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.CopyFrom(b.Context(), pgx.Identifier{schema, table},
		[]string{"id", "key", "content", "category", "created_at", "updated_at", "namespace", "agent_id"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := p.pool.Exec(b.Context(), "ANALYZE "+p.table); err != nil {
		b.Fatal(err)
	}
	return p, a
}

// BenchmarkPruneAutoSaved100k measures the conversation cap's prune on a brain.db holding 100,000 auto-saved
// rows of one agent: every iteration deletes the 90,000 beyond the newest 10,000 in pruneBatch transactions
// (the rows are put back, untimed, before the next iteration). Run it with -benchtime=1x: one iteration is
// the whole prune.
func BenchmarkPruneAutoSaved100k(b *testing.B) {
	db, err := OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "brain.db"), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	a, _ := db.EnsureAgent(b.Context(), "a")
	const rows, keep = 100_000, 10_000
	seed := func(from, to int) {
		tx, err := db.w.BeginTx(b.Context(), nil)
		if err != nil {
			b.Fatal(err)
		}
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := from; i < to; i++ {
			ts := stamp(base.Add(time.Duration(i) * time.Second))
			if _, err := tx.Exec(`INSERT INTO memories (id, key, content, category, created_at, updated_at, namespace, agent_id)
				VALUES (?, ?, ?, 'conversation', ?, ?, 'default', ?)`, newUUID(), AutoSaveKey(fmt.Sprintf("t%06d", i)),
				fmt.Sprintf("turn %d: %s %s", i, benchWords[i%len(benchWords)], benchWords[(i/7)%len(benchWords)]), ts, ts, a); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	seed(0, rows)
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		deleted := 0
		for {
			n, err := db.PruneAutoSaved(b.Context(), a, keep, pruneBatch)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			deleted += n
		}
		total += time.Since(start)
		if deleted != rows-keep {
			b.Fatalf("pruned %d rows, want %d", deleted, rows-keep)
		}
		b.StopTimer()
		seed(0, rows-keep) // the pruned (oldest) rows back
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/prune-90k")
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/float64(rows-keep), "µs/row")
}
