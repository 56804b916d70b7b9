package cron

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

var t0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// harness is a scheduler on a real jobs.db in a temp install, driven by a manual clock.
type harness struct {
	t     *testing.T
	root  string
	clk   *clocktest.Manual
	st    *store.CronStore
	s     *Scheduler
	cfg   atomic.Pointer[config.Config]
	ids   atomic.Int64
	agent *fakeAgents
	tasks *fakeTasks
}

func newHarness(t *testing.T, level string, edit func(*config.Config)) *harness {
	t.Helper()
	h := &harness{t: t, root: t.TempDir(), clk: clocktest.New(t0), agent: &fakeAgents{}, tasks: &fakeTasks{}}
	cfg := config.Default()
	rp := cfg.RiskProfiles["supervised"]
	rp.Level = level
	cfg.RiskProfiles["supervised"] = rp
	cfg.Reliability.SchedulerRetries = 0
	if edit != nil {
		edit(cfg)
	}
	h.cfg.Store(cfg)
	h.st = store.OpenCron(filepath.Join(h.root, "data", "cron", "jobs.db"))
	t.Cleanup(func() { h.st.Close() })
	h.s = New(Options{Store: h.st, Config: func() *config.Config { return h.cfg.Load() }, InstallRoot: h.root,
		Clock: h.clk, Local: time.UTC, Agents: h.agent, Tasks: h.tasks, Jitter: func() time.Duration { return 0 },
		NewID: func() string { return fmt.Sprintf("id-%d", h.ids.Add(1)) }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.s.Close(ctx)
	})
	return h
}

func (h *harness) workspace() string { return filepath.Join(h.root, "agents", "default", "workspace") }

func (h *harness) start() {
	h.t.Helper()
	if err := h.s.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// advance fires the loop's next timer, which must be armed for d.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	if !h.clk.WaitTimer(d, 10*time.Second) {
		h.t.Fatalf("no timer of %v armed", d)
	}
	h.clk.Advance(d)
}

// runs waits (a guard against a hung test, not a timing assertion) until job has n finished runs and returns
// them, newest first.
func (h *harness) runs(id string, n int) []store.CronRun {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runs, err := h.st.Runs(context.Background(), id, 100)
		if err != nil {
			h.t.Fatal(err)
		}
		done := 0
		for _, r := range runs {
			if r.Status != store.CronStatusRunning {
				done++
			}
		}
		if done >= n {
			if done > n {
				h.t.Fatalf("%d finished runs of %s, want %d: %+v", done, id, n, runs)
			}
			return runs
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s: %d of %d runs finished: %+v", id, done, n, runs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) job(id string) store.CronJob {
	h.t.Helper()
	j, err := h.st.Get(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

func (h *harness) add(r AddRequest) api.CronJob {
	h.t.Helper()
	if r.Agent == "" {
		r.Agent = "default"
	}
	j, err := h.s.Add(context.Background(), r)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

type fakeAgents struct {
	mu   sync.Mutex
	runs []AgentRun
}

func (f *fakeAgents) RunUnattended(_ context.Context, r AgentRun) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs = append(f.runs, r)
	return "summary: 3 new mails", nil
}

type fakeTasks struct {
	mu    sync.Mutex
	begun []Task
	ended map[string]string
}

func (f *fakeTasks) Begin(_ context.Context, t Task) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.begun = append(f.begun, t)
	return nil
}

func (f *fakeTasks) End(_ context.Context, id, status, _, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended == nil {
		f.ended = map[string]string{}
	}
	f.ended[id] = status
	return nil
}

func TestEveryJobRunsAtItsTimesAndStaysOnPace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 20_000}, Command: "echo tick >> ticks; cat ticks | wc -l"})
	if j.NextRun != wireTime(t0.Add(20*time.Second)) || j.DeleteAfterRun {
		t.Fatalf("added job %+v", j)
	}
	h.start()
	// The loop wakes at the job's time (20 s), before the 15 s poll would have ticked twice.
	h.advance(15 * time.Second)
	h.advance(5 * time.Second)
	runs := h.runs(j.ID, 1)
	if runs[0].Status != "ok" || !strings.Contains(*runs[0].Output, "1\n[exit code: 0]") {
		t.Fatalf("first run %+v %q", runs[0], *runs[0].Output)
	}
	if b, _ := os.ReadFile(filepath.Join(h.workspace(), "ticks")); string(b) != "tick\n" {
		t.Fatalf("the job did not run in the agent's workspace: %q", b)
	}
	got := h.job(j.ID)
	if !got.NextRun.Equal(t0.Add(40*time.Second)) || *got.LastStatus != "ok" || got.LockedAt != nil {
		t.Fatalf("after the run: next %v, status %v, locked %v", got.NextRun, *got.LastStatus, got.LockedAt)
	}
	h.advance(15 * time.Second)
	h.advance(5 * time.Second)
	h.runs(j.ID, 2)
}

func TestCronExpressionJobInItsZone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	// 08:00 UTC is 10:00 in Paris (CEST): the 10:01 Paris run is one minute away, weekdays only (June 1 2026 is
	// a Monday).
	j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "cron", Expr: "1 10 * * 1-5", TZ: "Europe/Paris"}, Command: "true"})
	if j.NextRun != "2026-06-01T08:01:00Z" || j.Expression != "1 10 * * 1-5" {
		t.Fatalf("next_run %s expression %q", j.NextRun, j.Expression)
	}
	h.start()
	h.advance(15 * time.Second)
	h.advance(15 * time.Second)
	h.advance(15 * time.Second)
	h.advance(15 * time.Second)
	h.runs(j.ID, 1)
	if next := h.job(j.ID).NextRun; !next.Equal(time.Date(2026, 6, 2, 8, 1, 0, 0, time.UTC)) {
		t.Fatalf("next run %v, want Tuesday 10:01 Paris", next)
	}
}

func TestAtJobDeletedAfterSuccessOrDisabledAfterFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	ok := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "at", At: t0.Add(10 * time.Second).Format(time.RFC3339)}, Command: "echo once"})
	bad := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "at", At: t0.Add(10 * time.Second).Format(time.RFC3339)}, Command: "exit 3"})
	if !ok.DeleteAfterRun {
		t.Fatal("an at job must default to delete_after_run")
	}
	h.start()
	h.advance(10 * time.Second)
	h.runs(bad.ID, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.st.Get(context.Background(), ok.ID); errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a successful at job with delete_after_run was not deleted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b := h.job(bad.ID)
	if b.Enabled || *b.LastStatus != "error" || !strings.Contains(*b.LastOutput, "[exit code: 3]") {
		t.Fatalf("failed at job: enabled %v status %v output %q", b.Enabled, *b.LastStatus, *b.LastOutput)
	}
	// Past at: refused at creation.
	if _, err := h.s.Add(context.Background(), AddRequest{Agent: "default", Schedule: api.CronSchedule{Kind: "at", At: t0.Format(time.RFC3339)}, Command: "true"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("at in the past: %v", err)
	}
}

// seed stores a job that fell due while no scheduler ran.
func seed(t *testing.T, st *store.CronStore, id string, sc api.CronSchedule, next time.Time) {
	t.Helper()
	enc, _ := encodeSchedule(sc)
	err := st.Add(context.Background(), store.CronJob{ID: id, Command: "echo caught up", Schedule: enc, JobType: "shell",
		SessionTarget: "isolated", Enabled: true, CreatedAt: next.Add(-time.Hour), NextRun: next, UsesMemory: true,
		AgentAlias: "default", ShellOutputFormat: "wrapped", DeleteAfterRun: sc.Kind == "at"})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCatchUpRunsOverdueJobsOnceAtStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	every := api.CronSchedule{Kind: "every", EveryMS: 600_000}
	seed(t, h.st, "missed-many", every, t0.Add(-3*time.Hour)) // 18 occurrences missed: runs once
	seed(t, h.st, "missed-at", api.CronSchedule{Kind: "at", At: wireTime(t0.Add(-time.Minute))}, t0.Add(-time.Minute))
	h.start()
	runs := h.runs("missed-many", 1)
	if runs[0].Status != "ok" {
		t.Fatalf("catch-up run %+v", runs[0])
	}
	if next := h.job("missed-many").NextRun; !next.Equal(t0.Add(10 * time.Minute)) {
		t.Fatalf("next run %v: want one interval after now, no replay of missed occurrences", next)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.st.Get(context.Background(), "missed-at"); errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the overdue one-shot did not run")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSkipOverdueJobsWhenCatchUpIsOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", func(c *config.Config) { c.Scheduler.CatchUpOnStartup = false })
	seed(t, h.st, "missed-many", api.CronSchedule{Kind: "every", EveryMS: 600_000}, t0.Add(-3*time.Hour))
	seed(t, h.st, "missed-at", api.CronSchedule{Kind: "at", At: wireTime(t0.Add(-time.Minute))}, t0.Add(-time.Minute))
	h.start()
	if runs, _ := h.st.Runs(context.Background(), "missed-many", 10); len(runs) != 0 {
		t.Fatalf("a skipped job ran: %+v", runs)
	}
	if next := h.job("missed-many").NextRun; !next.Equal(t0.Add(10 * time.Minute)) {
		t.Fatalf("next run %v, want the next future occurrence", next)
	}
	at := h.job("missed-at")
	if at.Enabled || *at.LastStatus != "skipped" || !strings.Contains(*at.LastOutput, "catch_up_on_startup disabled") {
		t.Fatalf("overdue one-shot: enabled %v status %v", at.Enabled, *at.LastStatus)
	}
}

func TestRetriesBackOffOnTheClock(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", func(c *config.Config) {
		c.Reliability.SchedulerRetries = 2
		c.Reliability.ProviderBackoffMS = 100 // below the 200 ms floor
	})
	// Fails twice, then succeeds.
	j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000},
		Command: `n=$(cat attempts 2>/dev/null || echo 0); n=$((n+1)); echo $n > attempts; test $n -ge 3`})
	h.start()
	h.advance(5 * time.Second)
	h.advance(200 * time.Millisecond) // first retry after the floor
	h.advance(400 * time.Millisecond) // doubled
	runs := h.runs(j.ID, 1)
	if runs[0].Status != "ok" {
		t.Fatalf("after retries: %+v %q", runs[0], *runs[0].Output)
	}
	if b, _ := os.ReadFile(filepath.Join(h.workspace(), "attempts")); string(b) != "3\n" {
		t.Fatalf("attempts = %q", b)
	}
}

func TestShellJobUnderTheAgentsRiskProfile(t *testing.T) {
	t.Parallel()
	t.Run("supervised: a command a turn would ask about is refused and recorded failed", func(t *testing.T) {
		h := newHarness(t, "supervised", func(c *config.Config) { c.Reliability.SchedulerRetries = 2 })
		j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000}, Command: "touch made-it"})
		h.start()
		h.advance(5 * time.Second)
		runs := h.runs(j.ID, 1) // one run, no retry timers: a refusal is final
		if runs[0].Status != "error" || !strings.HasPrefix(*runs[0].Output, "blocked by security policy: shell: command: needs approval") {
			t.Fatalf("run %+v %q", runs[0], *runs[0].Output)
		}
		if _, err := os.Stat(filepath.Join(h.workspace(), "made-it")); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the refused command ran")
		}
	})
	t.Run("supervised with shell auto-approved: runs", func(t *testing.T) {
		h := newHarness(t, "supervised", func(c *config.Config) {
			rp := c.RiskProfiles["supervised"]
			rp.AutoApprove = []string{"shell"}
			c.RiskProfiles["supervised"] = rp
		})
		j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000}, Command: "touch made-it"})
		h.start()
		h.advance(5 * time.Second)
		if runs := h.runs(j.ID, 1); runs[0].Status != "ok" {
			t.Fatalf("run %+v %q", runs[0], *runs[0].Output)
		}
	})
	t.Run("readonly: refused at creation and, stored anyway, at run", func(t *testing.T) {
		h := newHarness(t, "readonly", nil)
		_, err := h.s.Add(context.Background(), AddRequest{Agent: "default", Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000}, Command: "echo hi"})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "readonly") {
			t.Fatalf("Add under readonly = %v", err)
		}
		seed(t, h.st, "planted", api.CronSchedule{Kind: "every", EveryMS: 5_000}, t0.Add(5*time.Second))
		h.start()
		h.advance(5 * time.Second)
		if runs := h.runs("planted", 1); runs[0].Status != "error" || !strings.Contains(*runs[0].Output, "readonly") {
			t.Fatalf("run %+v %q", runs[0], *runs[0].Output)
		}
	})
	t.Run("full: a blocked command is refused at creation and, stored anyway, at run", func(t *testing.T) {
		h := newHarness(t, "full", nil)
		_, err := h.s.Add(context.Background(), AddRequest{Agent: "default", Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000}, Command: "rm -rf /"})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "blocked command") {
			t.Fatalf("Add(rm -rf /) = %v", err)
		}
		seed(t, h.st, "planted", api.CronSchedule{Kind: "every", EveryMS: 5_000}, t0.Add(5*time.Second))
		planted := h.job("planted")
		planted.Command = "rm -rf /"
		if err := h.st.Update(context.Background(), planted, false); err != nil {
			t.Fatal(err)
		}
		h.start()
		h.advance(5 * time.Second)
		if runs := h.runs("planted", 1); runs[0].Status != "error" || !strings.Contains(*runs[0].Output, "blocked command") {
			t.Fatalf("run %+v %q", runs[0], *runs[0].Output)
		}
	})
}

func TestShellTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	h.s.o.ShellTimeout = 300 * time.Millisecond
	j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000}, Command: "sleep 30"})
	h.start()
	h.advance(5 * time.Second)
	if runs := h.runs(j.ID, 1); runs[0].Status != "error" || !strings.Contains(*runs[0].Output, "timed out") {
		t.Fatalf("run %+v %q", runs[0], *runs[0].Output)
	}
}

func TestAgentJobRunsAnUnattendedTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "supervised", nil)
	j := h.add(AddRequest{Name: "inbox", Prompt: "summarise my inbox folder", Schedule: api.CronSchedule{Kind: "every", EveryMS: 5_000}})
	if j.JobType != "agent" || j.Command != "" {
		t.Fatalf("prompt without command: %+v", j)
	}
	h.start()
	h.advance(5 * time.Second)
	runs := h.runs(j.ID, 1)
	if runs[0].Status != "ok" || *runs[0].Output != "summary: 3 new mails" {
		t.Fatalf("run %+v", runs[0])
	}
	h.agent.mu.Lock()
	defer h.agent.mu.Unlock()
	r := h.agent.runs[0]
	if r.Agent != "default" || r.Prompt != "[cron:"+j.ID+" inbox] summarise my inbox folder" ||
		!strings.HasPrefix(r.SessionID, "cron-") || len(r.ExcludedTools) == 0 {
		t.Fatalf("agent run %+v", r)
	}
	h.tasks.mu.Lock()
	defer h.tasks.mu.Unlock()
	if len(h.tasks.begun) != 1 || h.tasks.begun[0].Kind != "cron" || h.tasks.ended[h.tasks.begun[0].ID] != "completed" {
		t.Fatalf("tasks %+v %v", h.tasks.begun, h.tasks.ended)
	}
}

func TestRecoveryMarksRunsLostAndReleasesClaims(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	seed(t, h.st, "rec", api.CronSchedule{Kind: "every", EveryMS: 600_000}, t0.Add(-time.Minute))
	seed(t, h.st, "once", api.CronSchedule{Kind: "at", At: wireTime(t0.Add(-time.Minute))}, t0.Add(-time.Minute))
	next := t0.Add(9 * time.Minute)
	// A previous process claimed both and died mid-run.
	for _, id := range []string{"rec", "once"} {
		c := store.Claim{JobID: id, Now: t0.Add(-time.Minute), Due: true, KeepRuns: 50}
		if id == "rec" {
			c.NextRun = &next
		}
		if _, ok, err := h.st.ClaimRun(context.Background(), c); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	h.start()
	for _, id := range []string{"rec", "once"} {
		runs, _ := h.st.Runs(context.Background(), id, 10)
		if len(runs) != 1 || runs[0].Status != store.CronStatusLost {
			t.Fatalf("%s runs %+v", id, runs)
		}
	}
	rec := h.job("rec")
	if rec.LockedAt != nil || !rec.Enabled || !rec.NextRun.Equal(next) {
		t.Fatalf("recurring job after recovery: %+v", rec)
	}
	if once := h.job("once"); once.Enabled {
		t.Fatal("a one-shot whose run was lost must not run again")
	}
	// It runs again at its next due time, not before.
	for range 35 {
		h.advance(15 * time.Second)
	}
	if runs, _ := h.st.Runs(context.Background(), "rec", 10); len(runs) != 1 {
		t.Fatalf("ran before its next due time: %+v", runs)
	}
	h.advance(15 * time.Second)
	if runs := h.runs("rec", 2); runs[0].Status != "ok" {
		t.Fatalf("next run %+v", runs[0])
	}
}

func TestTriggerRunsNowAndKeepsTheSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	j := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 3_600_000}, Command: "echo manual"})
	res, err := h.s.Trigger(context.Background(), j.ID)
	if err != nil || !res.Success || res.Status != "ok" || !strings.Contains(res.Output, "manual") {
		t.Fatalf("Trigger = %+v, %v", res, err)
	}
	if got := h.job(j.ID); got.NextRun.Format(time.RFC3339) != "2026-06-01T09:00:00Z" || *got.LastStatus != "ok" {
		t.Fatalf("after a manual run: %+v", got)
	}
	if _, err := h.s.Trigger(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Trigger(nope) = %v", err)
	}
}

func TestDeclarativeJobsReconciled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "full", nil)
	// No [cron] entries: nothing is created.
	if err := h.s.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.st.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reconcile of nothing created jobs.db: %v", err)
	}
	set := func(edit func(c *config.Config)) {
		c := *h.cfg.Load()
		c.Cron = map[string]config.CronJobDecl{}
		for k, v := range h.cfg.Load().Cron {
			c.Cron[k] = v
		}
		c.Agents = map[string]config.AgentConfig{"default": h.cfg.Load().Agents["default"]}
		edit(&c)
		h.cfg.Store(&c)
		if err := h.s.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	decl := config.CronJobDecl{JobType: "shell", Command: "echo nightly", Enabled: true, UsesMemory: true, ShellOutputFormat: "wrapped",
		Schedule: config.CronScheduleDecl{Kind: "every", EveryMS: 60_000}}
	set(func(c *config.Config) {
		c.Cron["nightly"] = decl
		c.Cron["unclaimed"] = decl
		a := c.Agents["default"]
		a.CronJobs = []string{"nightly"}
		c.Agents["default"] = a
	})
	j := h.job("nightly")
	if j.Source != "declarative" || j.AgentAlias != "default" || !j.NextRun.Equal(t0.Add(time.Minute)) {
		t.Fatalf("inserted %+v", j)
	}
	if _, err := h.st.Get(context.Background(), "unclaimed"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("a job no agent lists was inserted")
	}
	h.clk.Advance(10 * time.Second)
	set(func(c *config.Config) { d := c.Cron["nightly"]; d.Command = "echo changed"; c.Cron["nightly"] = d })
	if j := h.job("nightly"); j.Command != "echo changed" || !j.NextRun.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a changed command must keep next_run: %+v", j)
	}
	set(func(c *config.Config) { d := c.Cron["nightly"]; d.Schedule.EveryMS = 120_000; c.Cron["nightly"] = d })
	if j := h.job("nightly"); !j.NextRun.Equal(t0.Add(130 * time.Second)) {
		t.Fatalf("a changed schedule must recompute next_run: %v", j.NextRun)
	}
	// Deleting a declared job through the API is refused (it would return at the next reconcile) and keeps it.
	if err := h.s.Delete(context.Background(), "nightly"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "[cron.nightly]") {
		t.Fatalf("delete of a declared job: %v, want ErrInvalid naming [cron.nightly]", err)
	}
	h.job("nightly")
	imperative := h.add(AddRequest{Schedule: api.CronSchedule{Kind: "every", EveryMS: 60_000}, Command: "true"})
	set(func(c *config.Config) { delete(c.Cron, "nightly") })
	if _, err := h.st.Get(context.Background(), "nightly"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("a job removed from config was kept")
	}
	h.job(imperative.ID) // imperative jobs are untouched
}
