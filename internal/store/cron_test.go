package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstreamCronDDL is the jobs.db an older upstream release created (before the columns it later added with
// ALTER TABLE), with user_version 0 and the default journal mode.
const upstreamCronDDL = `
CREATE TABLE cron_jobs (
    id TEXT PRIMARY KEY, expression TEXT NOT NULL, command TEXT NOT NULL, created_at TEXT NOT NULL,
    next_run TEXT NOT NULL, last_run TEXT, last_status TEXT, last_output TEXT);
CREATE INDEX idx_cron_jobs_next_run ON cron_jobs(next_run);
CREATE TABLE cron_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT NOT NULL,
    status TEXT NOT NULL, output TEXT, duration_ms INTEGER,
    FOREIGN KEY (job_id) REFERENCES cron_jobs(id) ON DELETE CASCADE);
INSERT INTO cron_jobs (id, expression, command, created_at, next_run)
    VALUES ('legacy-1', '*/5 * * * *', 'echo legacy', '2025-01-02T03:04:05.123456789+00:00', '2025-01-02T03:05:00+00:00');
INSERT INTO cron_runs (job_id, started_at, finished_at, status, output, duration_ms)
    VALUES ('legacy-1', '2025-01-02T03:00:00+00:00', '2025-01-02T03:00:01.5+00:00', 'ok', 'status=exit status: 0', 1500);
`

// wantCronColumns is cron_jobs as upstream's current initialize_schema leaves it, in column order.
var wantCronColumns = []string{"id", "expression", "command", "schedule", "job_type", "prompt", "name",
	"session_target", "model", "enabled", "delivery", "delete_after_run", "allowed_tools", "created_at", "next_run",
	"last_run", "last_status", "last_output", "source", "uses_memory", "agent_alias", "locked_at", "shell_output_format"}

func cronColumns(t *testing.T, path string) []string {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query("SELECT name FROM pragma_table_info('cron_jobs')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, n)
	}
	return cols
}

func testJob(id string, next time.Time) CronJob {
	return CronJob{ID: id, Command: "echo hi", Schedule: `{"kind":"every","every_ms":60000}`, JobType: "shell",
		SessionTarget: "isolated", Enabled: true, Delivery: `{"mode":"none","channel":null,"to":null,"best_effort":true}`,
		CreatedAt: next.Add(-time.Minute), NextRun: next, UsesMemory: true, AgentAlias: "default",
		ShellOutputFormat: "wrapped"}
}

func TestCronReadsNeverCreate(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cron")
	s := OpenCron(filepath.Join(dir, "jobs.db"))
	defer s.Close()
	if jobs, err := s.List(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("List = %v, %v", jobs, err)
	}
	if _, err := s.Get(ctx, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get: %v, want ErrNotFound", err)
	}
	if _, err := s.Due(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.NextDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ClearLocks(ctx); err != nil || n != 0 {
		t.Fatalf("ClearLocks = %d, %v", n, err)
	}
	if ok, err := s.Delete(ctx, "x"); err != nil || ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if runs, err := s.Runs(ctx, "x", 10); err != nil || len(runs) != 0 {
		t.Fatalf("Runs = %v, %v", runs, err)
	}
	if _, ok, err := s.ClaimRun(ctx, Claim{JobID: "x", Now: time.Now()}); err != nil || ok {
		t.Fatalf("ClaimRun = %v, %v", ok, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read created %s: %v", dir, err)
	}
	// The first write creates it, with upstream's shape.
	if err := s.Add(ctx, testJob("a", time.Now())); err != nil {
		t.Fatal(err)
	}
	if got := cronColumns(t, s.Path()); !slices.Equal(got, wantCronColumns) {
		t.Fatalf("columns\n got %q\nwant %q", got, wantCronColumns)
	}
}

func TestCronAdoptsUpstreamDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(upstreamCronDDL); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s := OpenCron(path)
	defer s.Close()
	j, err := s.Get(ctx, "legacy-1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Expression != "*/5 * * * *" || j.Schedule != "" || j.JobType != "shell" || !j.Enabled || j.Source != CronSourceImperative ||
		j.ShellOutputFormat != "wrapped" || j.SessionTarget != "isolated" || !j.UsesMemory || j.AgentAlias != "" {
		t.Fatalf("legacy row read as %+v", j)
	}
	if want := time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC); !j.NextRun.Equal(want) {
		t.Fatalf("next_run = %v, want %v", j.NextRun, want)
	}
	// Added columns go at the end, as upstream's ALTER TABLE puts them.
	got, want := cronColumns(t, path), slices.Clone(wantCronColumns)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("columns after adoption\n got %q\nwant %q", got, want)
	}
	runs, err := s.Runs(ctx, "legacy-1", 20)
	if err != nil || len(runs) != 1 || runs[0].Status != "ok" || *runs[0].DurationMS != 1500 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	// Due compares upstream's "+00:00" text with ours.
	due, err := s.Due(ctx, time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC))
	if err != nil || len(due) != 1 {
		t.Fatalf("due at next_run = %v, %v", due, err)
	}
	due, err = s.Due(ctx, time.Date(2025, 1, 2, 3, 4, 59, 999_000_000, time.UTC))
	if err != nil || len(due) != 0 {
		t.Fatalf("due before next_run = %v, %v", due, err)
	}
}

func TestCronClaimOnceAcrossStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	a, b := OpenCron(path), OpenCron(path)
	defer a.Close()
	defer b.Close()
	if err := a.Add(ctx, testJob("j", now)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := s.ClaimRun(ctx, Claim{JobID: "j", Now: now, Due: true, KeepRuns: 50})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d claims succeeded, want 1", wins)
	}
	if due, _ := a.Due(ctx, now); len(due) != 0 {
		t.Fatalf("a claimed job is still due: %v", due)
	}
	runs, _ := a.Runs(ctx, "j", 10)
	if len(runs) != 1 || runs[0].Status != CronStatusRunning {
		t.Fatalf("runs = %+v", runs)
	}
	if n, err := b.ClearLocks(ctx); err != nil || n != 1 {
		t.Fatalf("ClearLocks = %d, %v", n, err)
	}
	if due, _ := a.Due(ctx, now); len(due) != 1 {
		t.Fatalf("after ClearLocks the job is not due: %v", due)
	}
}

func TestCronFinishPrunesCapsAndCompletes(t *testing.T) {
	ctx := context.Background()
	s := OpenCron(filepath.Join(t.TempDir(), "jobs.db"))
	defer s.Close()
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	if err := s.Add(ctx, testJob("j", now)); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		at := now.Add(time.Duration(i) * time.Minute)
		next := at.Add(time.Minute)
		id, ok, err := s.ClaimRun(ctx, Claim{JobID: "j", Now: at, NextRun: &next, KeepRuns: 3, Due: true})
		if err != nil || !ok {
			t.Fatalf("claim %d: %v %v", i, ok, err)
		}
		out := "run " + string(rune('a'+i))
		if i == 4 {
			out = strings.Repeat("é", MaxCronOutputBytes) // 2 bytes each: cut on a rune boundary
		}
		if err := s.FinishRun(ctx, Finish{JobID: "j", RunID: id, FinishedAt: at.Add(time.Second), Status: CronStatusOK,
			Output: out, DurationMS: 1000, Action: CompleteReschedule, NextRun: next, KeepRuns: 3}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, "j", 50)
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs = %d, %v; want the newest 3", len(runs), err)
	}
	if *runs[1].Output != "run d" || *runs[2].Output != "run c" {
		t.Fatalf("kept %q %q, want the newest", *runs[1].Output, *runs[2].Output)
	}
	o := *runs[0].Output
	if len(o) > MaxCronOutputBytes || !strings.HasSuffix(o, CronTruncatedMarker) || !strings.HasPrefix(o, "éé") ||
		!strings.HasSuffix(strings.TrimSuffix(o, CronTruncatedMarker), "é") {
		t.Fatalf("output not capped on a boundary: len %d, tail %q", len(o), o[len(o)-20:])
	}
	j, _ := s.Get(ctx, "j")
	if j.LockedAt != nil || *j.LastStatus != CronStatusOK || !j.NextRun.Equal(now.Add(5*time.Minute)) || *j.LastOutput != o {
		t.Fatalf("job after runs: %+v", j)
	}

	// A one-shot disabled, then deleted with its runs.
	id, _, _ := s.ClaimRun(ctx, Claim{JobID: "j", Now: now.Add(time.Hour), KeepRuns: 3})
	if err := s.FinishRun(ctx, Finish{JobID: "j", RunID: id, FinishedAt: now.Add(time.Hour), Status: CronStatusError, Action: CompleteDisable, KeepRuns: 3}); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get(ctx, "j"); j.Enabled {
		t.Fatal("disable left the job enabled")
	}
	id, _, _ = s.ClaimRun(ctx, Claim{JobID: "j", Now: now.Add(2 * time.Hour), KeepRuns: 3})
	if err := s.FinishRun(ctx, Finish{JobID: "j", RunID: id, FinishedAt: now.Add(2 * time.Hour), Status: CronStatusOK, Action: CompleteDelete, KeepRuns: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "j"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted job: %v", err)
	}
	if runs, _ := s.Runs(ctx, "j", 50); len(runs) != 0 {
		t.Fatalf("runs of a deleted job remain: %v", runs)
	}
}

func TestCronMarkRunLost(t *testing.T) {
	ctx := context.Background()
	s := OpenCron(filepath.Join(t.TempDir(), "jobs.db"))
	defer s.Close()
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	if err := s.Add(ctx, testJob("j", now)); err != nil {
		t.Fatal(err)
	}
	id, _, _ := s.ClaimRun(ctx, Claim{JobID: "j", Now: now, KeepRuns: 5})
	if rs, _ := s.RunningRuns(ctx); len(rs) != 1 || rs[0].ID != id || rs[0].JobID != "j" {
		t.Fatalf("running = %+v", rs)
	}
	if err := s.MarkRunLost(ctx, id, now.Add(3*time.Second), "lost: the daemon exited during the run", true); err != nil {
		t.Fatal(err)
	}
	runs, _ := s.Runs(ctx, "j", 5)
	if runs[0].Status != CronStatusLost || *runs[0].DurationMS != 3000 {
		t.Fatalf("run = %+v", runs[0])
	}
	if j, _ := s.Get(ctx, "j"); *j.LastStatus != CronStatusLost || j.Enabled {
		t.Fatalf("job after a lost one-shot run: last_status %v, enabled %v", *j.LastStatus, j.Enabled)
	}
}

func TestCronTimeSortsAsText(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	ts := []time.Time{base, base.Add(time.Millisecond), base.Add(500 * time.Millisecond), base.Add(500*time.Millisecond + time.Microsecond),
		base.Add(500*time.Millisecond + time.Microsecond + 1), base.Add(time.Second)}
	for i := 1; i < len(ts); i++ {
		if a, b := cronTime(ts[i-1]), cronTime(ts[i]); a >= b {
			t.Errorf("%s >= %s", a, b)
		}
	}
	if got := cronTime(base.Add(500 * time.Millisecond)); got != "2026-03-01T12:00:05.500+00:00" {
		t.Errorf("cronTime = %s", got)
	}
}
