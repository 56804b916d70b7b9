package rpctest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// seedCronRows inserts n shell jobs straight into jobs.db (which must exist), next_run one second apart after
// at, ids cron-00000.. in that order.
func seedCronRows(tb testing.TB, path string, n int, at time.Time) {
	tb.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO cron_jobs (id, expression, command, schedule, job_type, created_at, next_run,
		agent_alias, delivery, enabled) VALUES (?, '', 'echo hi', '{"kind":"every","every_ms":3600000}', 'shell', ?, ?,
		'default', '{"mode":"none","channel":null,"to":null,"best_effort":true}', 0)`)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		next := at.Add(time.Duration(i+1) * time.Second).UTC().Format(time.RFC3339Nano)
		if _, err := st.Exec(fmt.Sprintf("cron-%05d", i), at.UTC().Format(time.RFC3339Nano), next); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// cron/list is paged: with no limit (an upstream client) the first DefaultCronListLimit jobs and has_more, never
// more than MaxCronListLimit, and following next_offset walks every job once in order.
func TestCronListPages(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(fullShell))
	c := dialRC(t, d, "")
	var first api.CronJob // creates jobs.db; its next_run (an hour on) sorts after every seeded row
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "default", "schedule": map[string]any{"kind": "every", "every_ms": 3_600_000},
		"command": "echo first"}, &first)
	const n = 1200
	seedCronRows(t, filepath.Join(d.ConfigDir, "data", "cron", "jobs.db"), n, time.Now())

	var res api.CronListResult
	c.mustCall(api.MethodCronList, map[string]any{}, &res)
	if len(res.Jobs) != api.DefaultCronListLimit || !res.HasMore || res.NextOffset != api.DefaultCronListLimit {
		t.Fatalf("cron/list {}: %d jobs, has_more %v, next_offset %d; want the default page of %d with has_more",
			len(res.Jobs), res.HasMore, res.NextOffset, api.DefaultCronListLimit)
	}
	res = api.CronListResult{}
	c.mustCall(api.MethodCronList, map[string]any{"limit": 5000}, &res)
	if len(res.Jobs) != api.MaxCronListLimit || !res.HasMore || res.NextOffset != api.MaxCronListLimit {
		t.Fatalf("cron/list {limit:5000}: %d jobs, has_more %v, next_offset %d; want the maximum page", len(res.Jobs), res.HasMore, res.NextOffset)
	}

	var all []api.CronJob
	for offset, pages := 0, 0; ; pages++ {
		if pages > n {
			t.Fatal("next_offset does not advance")
		}
		res = api.CronListResult{}
		c.mustCall(api.MethodCronList, map[string]any{"limit": 250, "offset": offset}, &res)
		all = append(all, res.Jobs...)
		if !res.HasMore {
			break
		}
		offset = res.NextOffset
	}
	if len(all) != n+1 {
		t.Fatalf("the pages hold %d jobs, want %d", len(all), n+1)
	}
	for i := range n {
		if want := fmt.Sprintf("cron-%05d", i); all[i].ID != want {
			t.Fatalf("job %d is %s, want %s (soonest first, each once)", i, all[i].ID, want)
		}
	}
	if all[n].ID != first.ID {
		t.Fatalf("last job %s, want the one added by cron/add (%s)", all[n].ID, first.ID)
	}
	res = api.CronListResult{}
	c.mustCall(api.MethodCronList, map[string]any{"offset": n + 5}, &res)
	if res.Jobs == nil || len(res.Jobs) != 0 || res.HasMore {
		t.Fatalf("a page past the end: %+v, want [] without has_more", res)
	}
	for _, p := range []map[string]any{{"limit": -1}, {"offset": -3}} {
		_, werr := c.call(api.MethodCronList, p)
		wantErr(t, fmt.Sprint("cron/list ", p), werr, -32602, "must not be negative")
	}
}

// cron/list at 10k jobs over the socket: the default page (what an upstream client sending no limit gets) and
// a walk of every page of the maximum size (what a client that wants every job pays). answer_B is the bytes
// read per call or walk (BENCHMARKS.md, "Lean and long-running").
func BenchmarkCronList10k(b *testing.B) {
	d := Start(b, WithConfig(fullShell))
	bc := benchDial(b, d.Endpoint, true)
	defer bc.c.Close()
	bc.roundTrip(b, `{"jsonrpc":"2.0","method":"cron/add","params":{"agent":"default","schedule":{"kind":"every","every_ms":3600000},"command":"echo first"},"id":1}`+"\n")
	seedCronRows(b, filepath.Join(d.ConfigDir, "data", "cron", "jobs.db"), 10_000-1, time.Now())
	call := func(b *testing.B, params string) (int, api.CronListResult) {
		if _, err := bc.c.Write([]byte(`{"jsonrpc":"2.0","method":"cron/list","params":` + params + `,"id":2}` + "\n")); err != nil {
			b.Fatal(err)
		}
		line, err := bc.r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		var f struct{ Result api.CronListResult }
		if err := json.Unmarshal(line, &f); err != nil || len(f.Result.Jobs) == 0 {
			b.Fatalf("cron/list: %.200s %v", line, err)
		}
		return len(line), f.Result
	}
	b.Run("default_page", func(b *testing.B) {
		var n int
		for b.Loop() {
			n, _ = call(b, `{}`)
		}
		b.ReportMetric(float64(n), "answer_B")
	})
	b.Run("every_page", func(b *testing.B) {
		var n int
		for b.Loop() {
			n = 0
			for offset := 0; ; {
				m, res := call(b, fmt.Sprintf(`{"limit":%d,"offset":%d}`, api.MaxCronListLimit, offset))
				n += m
				if !res.HasMore {
					break
				}
				offset = res.NextOffset
			}
		}
		b.ReportMetric(float64(n), "answer_B")
	})
}
