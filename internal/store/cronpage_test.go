package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedCronJobs stores n jobs in one transaction, next_run one second apart from the last to the first (so the
// listing order is the reverse of the ids), every third of agent "ops" (with a stray space, as a hand-edited
// row may have), the others of "default", and returns the store.
func seedCronJobs(tb testing.TB, n int) *CronStore {
	tb.Helper()
	ctx := context.Background()
	s := OpenCron(filepath.Join(tb.TempDir(), "jobs.db"))
	tb.Cleanup(func() { s.Close() })
	d, err := s.open(ctx, true)
	if err != nil {
		tb.Fatal(err)
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO cron_jobs (id, expression, command, schedule, job_type, created_at,
		next_run, agent_alias, delivery) VALUES (?, '', 'echo hi', '{"kind":"every","every_ms":60000}', 'shell', ?, ?, ?,
		'{"mode":"none","channel":null,"to":null,"best_effort":true}')`)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	for i := range n {
		agent := "default"
		if i%3 == 0 {
			agent = "ops "
		}
		next := t0.Add(time.Duration(n-i) * time.Second)
		if _, err := st.ExecContext(ctx, fmt.Sprintf("job-%06d", i), cronTime(t0), cronTime(next), agent); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// A cron/list page is read off idx_cron_jobs_next_run_id (cron migration 0003) without sorting every job, in
// next_run order, offsets counting the rows of the agents asked for.
func TestCronListPageUsesTheOrderIndex(t *testing.T) {
	s := seedCronJobs(t, 300)
	ctx := t.Context()
	d, err := s.open(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := d.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+cronJobSelect+listCronOrder+" LIMIT ? OFFSET ?", 20, 0)
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
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "idx_cron_jobs_next_run_id") || strings.Contains(joined, "TEMP B-TREE") {
		t.Fatalf("query plan %q: want a walk of idx_cron_jobs_next_run_id without a sort", joined)
	}

	page, err := s.ListPage(ctx, nil, 10, 20)
	if err != nil || len(page) != 20 {
		t.Fatalf("page = %d rows, %v", len(page), err)
	}
	for i, j := range page {
		if want := fmt.Sprintf("job-%06d", 299-10-i); j.ID != want {
			t.Fatalf("row %d = %s, want %s (soonest next_run first, from offset 10)", i, j.ID, want)
		}
	}
	// Agent "ops" (stored with a trailing space, read trimmed) has jobs 0, 3, ..., 297: the second page of 40.
	ops, err := s.ListPage(ctx, []string{"ops"}, 40, 40)
	if err != nil || len(ops) != 40 {
		t.Fatalf("ops page = %d rows, %v", len(ops), err)
	}
	for i, j := range ops {
		if want := fmt.Sprintf("job-%06d", 297-3*(40+i)); j.ID != want || j.AgentAlias != "ops" {
			t.Fatalf("ops row %d = %s (%q), want %s", i, j.ID, j.AgentAlias, want)
		}
	}
	if last, err := s.ListPage(ctx, []string{"ops"}, 80, 40); err != nil || len(last) != 20 {
		t.Fatalf("ops last page = %d rows, %v; want the 20 left", len(last), err)
	}
	if none, err := s.ListPage(ctx, []string{}, 0, 40); err != nil || len(none) != 0 {
		t.Fatalf("no agents allowed: %d rows, %v", len(none), err)
	}
	if none, err := s.ListPage(ctx, []string{"ghost"}, 0, 40); err != nil || len(none) != 0 {
		t.Fatalf("an agent without jobs: %d rows, %v", len(none), err)
	}
}

// The cost of cron/list's store read at 10k jobs: every job (what cron/list read before it was paged) against
// its default page (BENCHMARKS.md, "Lean and long-running").
func BenchmarkCronList(b *testing.B) {
	s := seedCronJobs(b, 10_000)
	ctx := context.Background()
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if jobs, err := s.List(ctx); err != nil || len(jobs) != 10_000 {
				b.Fatal(len(jobs), err)
			}
		}
	})
	b.Run("page500", func(b *testing.B) {
		for b.Loop() {
			if jobs, err := s.ListPage(ctx, nil, 0, 501); err != nil || len(jobs) != 501 {
				b.Fatal(len(jobs), err)
			}
		}
	})
	b.Run("page500_at_9000", func(b *testing.B) {
		for b.Loop() {
			if jobs, err := s.ListPage(ctx, nil, 9000, 501); err != nil || len(jobs) != 501 {
				b.Fatal(len(jobs), err)
			}
		}
	})
}
