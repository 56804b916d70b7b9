package cronpg_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/cronpg"
	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// backends runs fn against each cron store the scheduler can have: jobs.db (SQLite) and PostgreSQL (when the
// test server is there; under CI=true it must be).
func backends(t *testing.T, fn func(t *testing.T, s cron.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s := store.OpenCron(filepath.Join(t.TempDir(), "jobs.db"))
		t.Cleanup(func() { _ = s.Close() })
		fn(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		s, _ := openPG(t, "d1")
		if s == nil {
			return
		}
		fn(t, s)
	})
}

// openPG is a PostgreSQL cron store on a fresh schema for daemon holder; more daemons on it come from
// openPeer.
func openPG(t *testing.T, holder string) (*cronpg.Store, func(holder string) *cronpg.Store) {
	t.Helper()
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return nil, nil
	}
	schema := pgtest.Schema(t, dsn)
	open := func(holder string) *cronpg.Store {
		p := pgtest.OpenSchema(t, dsn, schema)
		ls, err := lease.Open(t.Context(), p, holder)
		if err != nil {
			t.Fatal(err)
		}
		s, err := cronpg.Open(t.Context(), p, ls)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return open(holder), open
}

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func job(id, agent string, next time.Time) store.CronJob {
	name := "job " + id
	return store.CronJob{ID: id, Expression: "", Command: "echo " + id, Schedule: `{"kind":"every","every_ms":60000}`,
		JobType: "shell", Name: &name, SessionTarget: "isolated", Enabled: true, AllowedTools: `["shell"]`,
		CreatedAt: t0, NextRun: next, UsesMemory: true, AgentAlias: agent, ShellOutputFormat: "wrapped"}
}

func ids(jobs []store.CronJob) string {
	out := ""
	for _, j := range jobs {
		out += j.ID + " "
	}
	return out
}

func TestCronStoreJobs(t *testing.T) {
	backends(t, func(t *testing.T, s cron.Store) {
		ctx := t.Context()
		if jobs, err := s.List(ctx); err != nil || len(jobs) != 0 {
			t.Fatalf("empty store: %v %v", jobs, err)
		}
		if _, ok, err := s.NextDue(ctx); err != nil || ok {
			t.Fatalf("next due of an empty store: %v %v", ok, err)
		}
		for i, id := range []string{"c", "a", "b"} {
			if err := s.Add(ctx, job(id, []string{"ops", " ops ", "dev"}[i], t0.Add(time.Duration(i)*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Add(ctx, job("a", "ops", t0)); err == nil {
			t.Fatal("a second job with an existing id was added")
		}
		if err := s.Add(ctx, job("", "ops", t0)); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("empty id: %v", err)
		}
		got, err := s.Get(ctx, "a")
		if err != nil || got.AgentAlias != "ops" || *got.Name != "job a" || !got.NextRun.Equal(t0.Add(time.Minute)) ||
			got.Schedule != `{"kind":"every","every_ms":60000}` || got.Prompt != nil || !got.Enabled || got.LastRun != nil {
			t.Fatalf("get: %+v %v", got, err)
		}
		if _, err := s.Get(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get of a missing job: %v", err)
		}
		jobs, _ := s.List(ctx)
		if ids(jobs) != "c a b " {
			t.Fatalf("list order: %s", ids(jobs))
		}
		page, err := s.ListPage(ctx, []string{"ops"}, 1, 5)
		if err != nil || ids(page) != "a " {
			t.Fatalf("page of ops from 1: %s %v", ids(page), err)
		}
		if page, _ := s.ListPage(ctx, []string{}, 0, 5); len(page) != 0 {
			t.Fatal("an empty agent filter listed jobs")
		}
		if page, _ := s.ListPage(ctx, nil, 1, 1); ids(page) != "a " {
			t.Fatalf("unfiltered page: %s", ids(page))
		}
		due, err := s.Due(ctx, t0.Add(time.Minute))
		if err != nil || ids(due) != "c a " {
			t.Fatalf("due: %s %v", ids(due), err)
		}
		if next, ok, err := s.NextDue(ctx); err != nil || !ok || !next.Equal(t0) {
			t.Fatalf("next due: %v %v %v", next, ok, err)
		}
		j := job("c", "dev", t0.Add(time.Hour))
		j.Enabled = false
		j.ShellOutputFormat = "raw"
		if err := s.Update(ctx, j, true); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "c"); got.Enabled || got.AgentAlias != "dev" || got.ShellOutputFormat != "wrapped" {
			t.Fatalf("update keeping the format: %+v", got)
		}
		if err := s.Update(ctx, job("zz", "", t0), false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("update of a missing job: %v", err)
		}
		if due, _ := s.Due(ctx, t0.Add(2*time.Hour)); ids(due) != "a b " {
			t.Fatalf("a disabled job is due: %s", ids(due))
		}
		if ok, err := s.Delete(ctx, "b"); !ok || err != nil {
			t.Fatalf("delete: %v %v", ok, err)
		}
		if ok, _ := s.Delete(ctx, "b"); ok {
			t.Fatal("a second delete deleted something")
		}
	})
}

func TestCronStoreRuns(t *testing.T) {
	backends(t, func(t *testing.T, s cron.Store) {
		ctx := t.Context()
		if err := s.Add(ctx, job("j", "ops", t0)); err != nil {
			t.Fatal(err)
		}
		next := t0.Add(time.Minute)
		stale := t0.Add(-time.Minute)
		if _, ok, err := s.ClaimRun(ctx, store.Claim{JobID: "j", Now: t0, Due: true, DueAt: &stale, KeepRuns: 10}); ok || err != nil {
			t.Fatalf("a claim of an occurrence the job is no longer at: %v %v", ok, err)
		}
		run, ok, err := s.ClaimRun(ctx, store.Claim{JobID: "j", Now: t0, NextRun: &next, Due: true, DueAt: &t0, KeepRuns: 10})
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if _, ok, _ := s.ClaimRun(ctx, store.Claim{JobID: "j", Now: t0, KeepRuns: 10}); ok {
			t.Fatal("a claimed job was claimed again")
		}
		if due, _ := s.Due(ctx, t0.Add(time.Hour)); len(due) != 0 {
			t.Fatal("a claimed job is due")
		}
		running, err := s.RunningRuns(ctx)
		if err != nil || len(running) != 1 || running[0].ID != run {
			t.Fatalf("running: %+v %v", running, err)
		}
		if got, _ := s.Get(ctx, "j"); !got.NextRun.Equal(next) || got.LockedAt == nil {
			t.Fatalf("after claim: %+v", got)
		}
		fin := t0.Add(1500 * time.Millisecond)
		if err := s.FinishRun(ctx, store.Finish{JobID: "j", RunID: run, FinishedAt: fin, Status: store.CronStatusOK,
			Output: "hello", DurationMS: 1500, Action: store.CompleteReschedule, NextRun: t0.Add(2 * time.Minute), KeepRuns: 2}); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Get(ctx, "j")
		if got.LockedAt != nil || !got.NextRun.Equal(t0.Add(2*time.Minute)) || *got.LastStatus != "ok" || *got.LastOutput != "hello" || !got.LastRun.Equal(fin) {
			t.Fatalf("after finish: %+v", got)
		}
		runs, err := s.Runs(ctx, "j", 10)
		if err != nil || len(runs) != 1 || runs[0].Status != "ok" || *runs[0].DurationMS != 1500 || !runs[0].StartedAt.Equal(t0) {
			t.Fatalf("runs: %+v %v", runs, err)
		}
		// Three more runs with a history of 2: the newest two stay. The last is cut and marked lost.
		var last int64
		for i := 1; i <= 3; i++ {
			at := t0.Add(time.Duration(i) * time.Hour)
			id, ok, err := s.ClaimRun(ctx, store.Claim{JobID: "j", Now: at, KeepRuns: 2})
			if err != nil || !ok {
				t.Fatalf("run %d: %v %v", i, ok, err)
			}
			last = id
			if i < 3 {
				if err := s.FinishRun(ctx, store.Finish{JobID: "j", RunID: id, FinishedAt: at, Status: store.CronStatusError,
					Output: "boom", Action: store.CompleteRecord, KeepRuns: 2}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.MarkRunLost(ctx, last, t0.Add(3*time.Hour+2*time.Second), "lost: cut", true); err != nil {
			t.Fatal(err)
		}
		runs, _ = s.Runs(ctx, "j", 10)
		if len(runs) != 2 || runs[0].Status != store.CronStatusLost || *runs[0].DurationMS != 2000 || runs[1].Status != "error" {
			t.Fatalf("runs after the lost one: %+v", runs)
		}
		if got, _ := s.Get(ctx, "j"); got.Enabled || *got.LastStatus != store.CronStatusLost || got.LockedAt == nil {
			t.Fatalf("job after a lost run (disabled, lock kept for ClearLocks): %+v", got)
		}
		if n, err := s.ClearLocks(ctx); err != nil || n != 1 {
			t.Fatalf("clear locks: %d %v", n, err)
		}
		// Skipping a missed occurrence moves a recurring job; a one-shot is disabled with skipped.
		if err := s.Add(ctx, job("k", "ops", t0)); err != nil {
			t.Fatal(err)
		}
		later := t0.Add(5 * time.Hour)
		if err := s.SkipMissed(ctx, "k", t0, &later); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "k"); !got.NextRun.Equal(later) {
			t.Fatalf("skip: %+v", got)
		}
		if err := s.SkipMissed(ctx, "k", t0, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "k"); got.Enabled || *got.LastStatus != store.CronStatusSkipped {
			t.Fatalf("skip of a one-shot: %+v", got)
		}
		// Deleting a job deletes its runs; finishing a run of a deleted job records nothing and is no error.
		id, _, _ := s.ClaimRun(ctx, store.Claim{JobID: "k", Now: t0, KeepRuns: 5})
		if _, err := s.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, store.Finish{JobID: "k", RunID: id, FinishedAt: t0, Status: "ok", KeepRuns: 5}); err != nil {
			t.Fatal(err)
		}
		if runs, _ := s.Runs(ctx, "k", 5); len(runs) != 0 {
			t.Fatalf("runs of a deleted job: %+v", runs)
		}
	})
}

// expireClaims makes every running cron claim lapse as if its ttl had passed, without waiting on a clock.
func expireClaims(t *testing.T, s *cronpg.Store) {
	t.Helper()
	if _, err := pgdbOf(s).Exec(t.Context(), "UPDATE zc_work SET lease_until = now() - interval '1 second' WHERE state = 'running'"); err != nil {
		t.Fatal(err)
	}
}

// Of two daemons, one claims a slot; its run record and its end are fenced on the claim: once the claim expired
// and another daemon settled it, the first daemon's end is refused and writes nothing, and the run stays
// recorded once, lost.
func TestSharedSlotsAreFenced(t *testing.T) {
	a, open := openPG(t, "daemon-a")
	if a == nil {
		return
	}
	b := open("daemon-b")
	ctx := t.Context()
	if err := a.Add(ctx, job("j", "ops", t0)); err != nil {
		t.Fatal(err)
	}
	slot := cron.SlotKey("j", t0)
	if res, err := a.ClaimSlot(ctx, slot, time.Minute); err != nil || res != cron.SlotClaimed {
		t.Fatalf("a's claim: %v %v", res, err)
	}
	if res, _ := b.ClaimSlot(ctx, slot, time.Minute); res != cron.SlotBusy {
		t.Fatalf("b's claim of a held slot: %v", res)
	}
	// b cannot record a run on a slot it does not hold.
	if _, _, err := b.ClaimRun(ctx, store.Claim{JobID: "j", Now: t0, Due: true, DueAt: &t0, Slot: slot, KeepRuns: 5}); !errors.Is(err, cron.ErrSlotLost) {
		t.Fatalf("b's fenced claim: %v", err)
	}
	next := t0.Add(time.Minute)
	run, ok, err := a.ClaimRun(ctx, store.Claim{JobID: "j", Now: t0, NextRun: &next, Due: true, DueAt: &t0, Slot: slot, KeepRuns: 5})
	if err != nil || !ok {
		t.Fatalf("a's run record: %v %v", ok, err)
	}
	if err := a.ExtendSlot(ctx, slot, time.Minute); err != nil {
		t.Fatal(err)
	}
	// a dies; its claim expires; b sweeps and settles.
	expireClaims(t, a)
	swept, err := b.SweepSlots(ctx)
	if err != nil || len(swept) != 1 || swept[0] != slot {
		t.Fatalf("sweep: %v %v", swept, err)
	}
	later := t0.Add(time.Hour)
	if err := b.SettleSlot(ctx, cron.Settle{JobID: "j", Slot: slot, At: t0.Add(time.Second), Note: "lost: a died", DueAt: &t0, NextRun: &later}); err != nil {
		t.Fatal(err)
	}
	got, _ := b.Get(ctx, "j")
	if got.LockedAt != nil || !got.NextRun.Equal(next) || *got.LastStatus != store.CronStatusLost {
		t.Fatalf("job after settle (lock released, next_run already past the slot kept): %+v", got)
	}
	// a comes back: its extend and its end are refused, nothing is written.
	if err := a.ExtendSlot(ctx, slot, time.Minute); !errors.Is(err, cron.ErrSlotLost) {
		t.Fatalf("late extend: %v", err)
	}
	err = a.FinishRun(ctx, store.Finish{JobID: "j", RunID: run, FinishedAt: t0.Add(2 * time.Second), Status: "ok", Output: "late",
		Action: store.CompleteReschedule, NextRun: t0.Add(3 * time.Hour), KeepRuns: 5, Slot: slot})
	if !errors.Is(err, cron.ErrSlotLost) {
		t.Fatalf("late finish: %v", err)
	}
	runs, _ := b.Runs(ctx, "j", 10)
	if len(runs) != 1 || runs[0].Status != store.CronStatusLost || *runs[0].Output != "lost: a died" {
		t.Fatalf("runs: %+v", runs)
	}
	if got, _ := b.Get(ctx, "j"); !got.NextRun.Equal(next) || *got.LastOutput != "lost: a died" {
		t.Fatalf("the late finish changed the job: %+v", got)
	}
	if res, _ := b.ClaimSlot(ctx, slot, time.Minute); res != cron.SlotFinished {
		t.Fatalf("a settled slot claimed again: %v", res)
	}
}

// A daemon that dies between claiming a slot and recording its run leaves no run row and the job still at
// that occurrence: the daemon that finds the claim expired records one lost run and moves the job on, so the
// occurrence is neither run twice nor skipped without a record; a one-shot is disabled.
func TestSharedSlotDiedBeforeItsRunRecord(t *testing.T) {
	a, open := openPG(t, "daemon-a")
	if a == nil {
		return
	}
	b := open("daemon-b")
	ctx := t.Context()
	for _, id := range []string{"rec", "once"} {
		if err := a.Add(ctx, job(id, "ops", t0)); err != nil {
			t.Fatal(err)
		}
		if res, err := a.ClaimSlot(ctx, cron.SlotKey(id, t0), time.Minute); err != nil || res != cron.SlotClaimed {
			t.Fatalf("claim %s: %v %v", id, res, err)
		}
	}
	expireClaims(t, a)
	if res, err := b.ClaimSlot(ctx, cron.SlotKey("rec", t0), time.Minute); err != nil || res != cron.SlotInterrupted {
		t.Fatalf("b's claim of an expired slot: %v %v", res, err)
	}
	next := t0.Add(time.Minute)
	for _, st := range []cron.Settle{
		{JobID: "rec", Slot: cron.SlotKey("rec", t0), At: t0, Note: "lost", DueAt: &t0, NextRun: &next},
		{JobID: "once", Slot: cron.SlotKey("once", t0), At: t0, Note: "lost", DueAt: &t0, Disable: true},
	} {
		// Settling twice (the sweep and a claim can both find it) records one run.
		for range 2 {
			if err := b.SettleSlot(ctx, st); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, _ := b.Get(ctx, "rec"); !got.NextRun.Equal(next) || !got.Enabled {
		t.Fatalf("recurring job after settle: %+v", got)
	}
	if got, _ := b.Get(ctx, "once"); got.Enabled {
		t.Fatalf("one-shot after settle: %+v", got)
	}
	for _, id := range []string{"rec", "once"} {
		if runs, _ := b.Runs(ctx, id, 10); len(runs) != 1 || runs[0].Status != store.CronStatusLost {
			t.Fatalf("%s runs: %+v", id, runs)
		}
	}
	if swept, err := b.SweepSlots(ctx); err != nil || len(swept) != 1 || swept[0] != cron.SlotKey("once", t0) {
		t.Fatalf("sweep after settle: %v %v", swept, err)
	}
}

func TestSlotKeyRoundTrip(t *testing.T) {
	due := time.Date(2026, 12, 3, 10, 0, 0, 123456000, time.UTC)
	id, got, ok := cron.ParseSlotKey(cron.SlotKey("job@with@ats", due))
	if !ok || id != "job@with@ats" || got == nil || !got.Equal(due) {
		t.Fatalf("%q %v %v", id, got, ok)
	}
	if id, got, ok := cron.ParseSlotKey("j@manual:abc"); !ok || id != "j" || got != nil {
		t.Fatalf("manual: %q %v %v", id, got, ok)
	}
	for _, bad := range []string{"", "nodue", "@2026-12-03T10:00:00Z", "j@yesterday"} {
		if _, _, ok := cron.ParseSlotKey(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseSlotKey(f *testing.F) {
	f.Add("j@2026-12-03T10:00:00Z")
	f.Add("j@manual:x")
	f.Fuzz(func(t *testing.T, s string) {
		id, due, ok := cron.ParseSlotKey(s)
		if ok && due != nil && cron.SlotKey(id, *due) == "" {
			t.Fatal("empty key")
		}
	})
}

func pgdbOf(s *cronpg.Store) *pgdb.Pool { return cronpg.PoolOf(s) }

// A daemon killed between recording a slot interrupted (a Claim that found the claim expired) and settling its
// run leaves the slot interrupted with no run: the next sweep, on any daemon, hands it back to be settled, so the
// occurrence still gets its one lost run; once settled, or once its job is deleted, it is not handed back.
func TestSharedSlotInterruptedButNotSettledIsSweptAgain(t *testing.T) {
	a, open := openPG(t, "daemon-a")
	if a == nil {
		return
	}
	b, c := open("daemon-b"), open("daemon-c")
	ctx := t.Context()
	for _, id := range []string{"kept", "gone"} {
		if err := a.Add(ctx, job(id, "ops", t0)); err != nil {
			t.Fatal(err)
		}
		if res, err := a.ClaimSlot(ctx, cron.SlotKey(id, t0), time.Minute); err != nil || res != cron.SlotClaimed {
			t.Fatalf("claim %s: %v %v", id, res, err)
		}
	}
	expireClaims(t, a)
	for _, id := range []string{"kept", "gone"} {
		// b finds each claim expired (the slot is now recorded interrupted) and dies before settling it.
		if res, err := b.ClaimSlot(ctx, cron.SlotKey(id, t0), time.Minute); err != nil || res != cron.SlotInterrupted {
			t.Fatalf("b's claim of %s: %v %v", id, res, err)
		}
	}
	if _, err := c.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	swept, err := c.SweepSlots(ctx)
	if err != nil || len(swept) != 1 || swept[0] != cron.SlotKey("kept", t0) {
		t.Fatalf("c's sweep: %v %v, want the unsettled slot of kept only", swept, err)
	}
	next := t0.Add(time.Minute)
	if err := c.SettleSlot(ctx, cron.Settle{JobID: "kept", Slot: swept[0], At: t0, Note: "lost", DueAt: &t0, NextRun: &next}); err != nil {
		t.Fatal(err)
	}
	if runs, _ := c.Runs(ctx, "kept", 10); len(runs) != 1 || runs[0].Status != store.CronStatusLost {
		t.Fatalf("kept's runs: %+v", runs)
	}
	if swept, err := c.SweepSlots(ctx); err != nil || len(swept) != 0 {
		t.Fatalf("a sweep after the settle: %v %v, want nothing", swept, err)
	}
}
