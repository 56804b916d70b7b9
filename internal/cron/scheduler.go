package cron

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Sentinels of the job operations; the rpc layer maps them to wire codes.
var (
	// ErrNotFound: no job with that id (or name).
	ErrNotFound = errors.New("cron: job not found")
	// ErrInvalid: params a job cannot be made from; wrapped with the detail.
	ErrInvalid = errors.New("cron: invalid job")
	// ErrBusy: the job is running already (cron/trigger).
	ErrBusy = errors.New("cron: job is running")
)

// Upstream's constants (cron-logs-costs.md §A2, §A4).
const (
	MinPoll          = 5 * time.Second
	ShellTimeout     = 120 * time.Second
	maxBackoff       = 30 * time.Second
	minBackoff       = 200 * time.Millisecond
	policyRefusal    = "blocked by security policy:"
	lostNote         = "lost: the daemon exited while the job was running"
	cancelledNote    = "cancelled: the daemon stopped while the job was running"
	defaultRunsLimit = 20
)

// AgentRun is one unattended agent turn of an agent job.
type AgentRun struct {
	Agent     string
	SessionID string
	Prompt    string
	// AllowedTools, when non-empty, are the only tools the turn may use; ExcludedTools are never offered.
	AllowedTools  []string
	ExcludedTools []string
}

// AgentRunner runs agent jobs' turns. A turn runs under the agent's risk profile; nobody is there to approve a
// call, so what the profile would ask about is refused.
type AgentRunner interface {
	RunUnattended(ctx context.Context, r AgentRun) (string, error)
}

// Task is a run registered with the control plane.
type Task struct {
	ID        string
	Kind      string
	Agent     string
	Ref       string // the job and run it belongs to
	StartedAt time.Time
}

// Tasks registers runs as supervised tasks (data/control_plane.db). Implementations must be safe for
// concurrent use.
type Tasks interface {
	Begin(ctx context.Context, t Task) error
	// End records the terminal status (completed, failed, cancelled) unless the task is terminal already.
	End(ctx context.Context, id, status, output, errText string) error
}

// Options configure a Scheduler. Store and Config are required.
type Options struct {
	Store       Store
	Config      func() *config.Config
	InstallRoot string // agents/<alias>/workspace lives here
	Clock       clock.Clock
	Logger      *slog.Logger
	Agents      AgentRunner   // nil: agent jobs fail
	Tasks       Tasks         // nil: runs are not registered
	NewID       func() string // job and task ids; nil: random UUIDv4
	// Local is the zone of cron expressions without a tz; nil: the host's (time.Local).
	Local *time.Location
	// Jitter is added to each retry delay (upstream: 0-249 ms); nil: random.
	Jitter func() time.Duration
	// ShellTimeout bounds one shell job; 0: ShellTimeout (120 s).
	ShellTimeout time.Duration
}

// Scheduler runs due jobs. Start begins it, Close stops it; both are called once. Job operations (Add, Trigger,
// ...) work whether or not it runs.
type Scheduler struct {
	o     Options
	sched Schedules
	log   *slog.Logger
	kick  chan struct{}
	// reconcile is set by ConfigChanged: the loop reconciles declarative jobs at its next wake.
	reconcile atomic.Bool

	wg     sync.WaitGroup // the loop and every run
	mu     sync.Mutex     // guards the fields below
	cancel context.CancelFunc
	runCtx context.Context // cancelled by Close; runs derive from it
	slots  chan struct{}   // max_concurrent, fixed at Start
	closed bool
}

// New returns a stopped Scheduler.
func New(o Options) *Scheduler {
	o.Clock = clock.OrReal(o.Clock)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NewID == nil {
		o.NewID = uuid4
	}
	if o.Jitter == nil {
		o.Jitter = func() time.Duration {
			n, _ := rand.Int(rand.Reader, big.NewInt(250))
			return time.Duration(n.Int64()) * time.Millisecond
		}
	}
	if o.ShellTimeout <= 0 {
		o.ShellTimeout = ShellTimeout
	}
	return &Scheduler{o: o, sched: Schedules{Local: o.Local}, log: o.Logger.With("component", "cron"),
		kick: make(chan struct{}, 1)}
}

// Start recovers from the previous process (its running runs are lost, its claims released), catches up on
// the jobs that fell due while no scheduler ran (or skips them, per [scheduler] catch_up_on_startup) and starts
// the tick loop. With [scheduler] enabled = false only the recovery runs. ctx bounds the startup work only.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.cancel != nil || s.closed {
		s.mu.Unlock()
		return errors.New("cron: scheduler started twice")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.runCtx, s.cancel = runCtx, cancel
	cfg := s.o.Config()
	s.slots = make(chan struct{}, max(cfg.Scheduler.MaxConcurrent, 1))
	s.mu.Unlock()

	if err := s.Reconcile(ctx); err != nil {
		s.log.Warn("declarative jobs not reconciled", "err", err)
	}
	if sh, ok := s.o.Store.(Shared); ok {
		// Other daemons' runs are live: only the claims that expired are this daemon's to settle.
		s.sweep(ctx, sh)
	} else {
		s.recover(ctx)
	}
	if !cfg.Scheduler.Enabled {
		s.log.Info("scheduler disabled ([scheduler] enabled = false)")
		return nil
	}
	now := s.o.Clock.Now()
	overdue, err := s.o.Store.Due(ctx, now)
	if err != nil {
		s.log.Warn("startup catch-up query failed", "err", err)
	}
	overdue = s.live(cfg, overdue)
	if len(overdue) > 0 {
		if cfg.Scheduler.CatchUpOnStartup {
			s.log.Info("catching up overdue jobs", "count", len(overdue))
			for _, j := range overdue {
				s.launch(runCtx, j)
			}
		} else {
			s.skipMissed(ctx, overdue, now)
		}
	}
	select { // changes made before the loop runs are seen by its first wait
	case <-s.kick:
	default:
	}
	s.wg.Add(1)
	go s.loop(runCtx)
	return nil
}

// recover marks the runs a previous process left running lost (disabling a one-shot: it is not run twice) and
// releases every claim, as upstream does at scheduler start.
func (s *Scheduler) recover(ctx context.Context) {
	runs, err := s.o.Store.RunningRuns(ctx)
	if err != nil {
		s.log.Warn("runs left running not checked", "err", err)
	}
	now := s.o.Clock.Now()
	for _, r := range runs {
		oneShot := false
		if j, err := s.o.Store.Get(ctx, r.JobID); err == nil {
			if sc, err := scheduleOf(j); err == nil && sc.Kind == api.ScheduleAt {
				oneShot = true
			}
		}
		if err := s.o.Store.MarkRunLost(ctx, r.ID, now, lostNote, oneShot); err != nil {
			s.log.Warn("run not marked lost", "job", r.JobID, "run", r.ID, "err", err)
			continue
		}
		s.log.Info("run left running by the previous process marked lost", "job", r.JobID, "run", r.ID)
	}
	if n, err := s.o.Store.ClearLocks(ctx); err != nil {
		s.log.Warn("stale claims not cleared", "err", err)
	} else if n > 0 {
		s.log.Info("cleared stale cron claims", "count", n)
	}
}

// skipMissed moves overdue recurring jobs to their next future occurrence and disables overdue one-shots.
func (s *Scheduler) skipMissed(ctx context.Context, jobs []store.CronJob, now time.Time) {
	for _, j := range jobs {
		var next *time.Time
		if sc, err := scheduleOf(j); err == nil && sc.Kind != api.ScheduleAt {
			n, err := s.sched.Next(sc, now)
			if err != nil {
				s.log.Warn("overdue job not advanced", "job", j.ID, "err", err)
				continue
			}
			next = &n
		}
		if err := s.o.Store.SkipMissed(ctx, j.ID, now, next); err != nil {
			s.log.Warn("overdue job not skipped", "job", j.ID, "err", err)
		}
	}
	s.log.Info("skipped overdue jobs (catch_up_on_startup = false)", "count", len(jobs))
}

// Close stops the loop, cancels running jobs (each is recorded as failed) and waits for them, at most until ctx
// ends. It is idempotent.
func (s *Scheduler) Close(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.log.Warn("cron runs still finishing at shutdown")
	}
}

// ConfigChanged tells the scheduler the config was reloaded or edited: the loop reconciles the declarative jobs
// with it. It does not block (it may be called from config.Manager.OnChange).
func (s *Scheduler) ConfigChanged() {
	s.reconcile.Store(true)
	s.Kick()
}

// Kick makes the loop re-read the next due time now (a job was added or changed).
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// loop ticks every max([reliability] scheduler_poll_secs, 5) seconds, waking earlier when a job falls due
// before the next tick, so a job runs at its time rather than up to a tick late.
func (s *Scheduler) loop(ctx context.Context) {
	defer s.wg.Done()
	for {
		wait := s.nextWait(ctx)
		t := s.o.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.kick:
			t.Stop()
			if s.reconcile.Swap(false) {
				if err := s.Reconcile(ctx); err != nil {
					s.log.Warn("declarative jobs not reconciled after a config change", "err", err)
				}
			}
			continue
		case <-t.C:
		}
		s.tick(ctx)
	}
}

// nextWait is the time until the next tick, or until the earliest due job if sooner (at least 1 s when that job
// is due already, so a job that cannot be claimed does not spin the loop).
func (s *Scheduler) nextWait(ctx context.Context) time.Duration {
	poll := time.Duration(s.o.Config().Reliability.SchedulerPollSecs) * time.Second
	wait := max(poll, MinPoll)
	if _, shared := s.o.Store.(Shared); shared {
		// The expired claims of a dead daemon are swept at the next tick: at most a ttl after they expire.
		wait = min(wait, s.claimTTL())
	}
	next, ok, err := s.o.Store.NextDue(ctx)
	if err != nil || !ok {
		return wait
	}
	d := next.Sub(s.o.Clock.Now())
	if d <= 0 {
		d = time.Second
	}
	return min(wait, d)
}

// tick claims the due jobs (at most [scheduler] max_tasks) and starts them.
func (s *Scheduler) tick(ctx context.Context) {
	cfg := s.o.Config()
	if !cfg.Scheduler.Enabled {
		return
	}
	if sh, ok := s.o.Store.(Shared); ok {
		s.sweep(ctx, sh)
	}
	jobs, err := s.o.Store.Due(ctx, s.o.Clock.Now())
	if err != nil {
		s.log.Warn("due query failed", "err", err)
		return
	}
	jobs = s.live(cfg, jobs)
	if limit := max(cfg.Scheduler.MaxTasks, 1); len(jobs) > limit {
		jobs = jobs[:limit]
	}
	for _, j := range jobs {
		s.launch(ctx, j)
	}
}

// live drops declarative rows whose [cron.<id>] entry is gone from config (upstream skips them).
func (s *Scheduler) live(cfg *config.Config, jobs []store.CronJob) []store.CronJob {
	return slices.DeleteFunc(jobs, func(j store.CronJob) bool {
		if j.Source == store.CronSourceDeclarative {
			if _, ok := cfg.Cron[j.ID]; !ok {
				s.log.Warn("skipping orphaned declarative job: not in config", "job", j.ID)
				return true
			}
		}
		return false
	})
}

// launch claims a due job and runs it in the background (at most max_concurrent at once). A job claimed by
// another scheduler, or changed since it was read, is left alone.
func (s *Scheduler) launch(ctx context.Context, j store.CronJob) {
	cfg := s.o.Config()
	now := s.o.Clock.Now()
	claim := store.Claim{JobID: j.ID, Now: now, Due: true, KeepRuns: cfg.Scheduler.MaxRunHistory}
	if sc, err := scheduleOf(j); err == nil && sc.Kind != api.ScheduleAt {
		// The following occurrence, written with the claim: a run cut by a crash resumes there.
		if n, err := s.sched.Next(sc, now); err == nil {
			claim.NextRun = &n
		}
	}
	sh, shared := s.o.Store.(Shared)
	if shared {
		// Of the daemons sharing the store, the one that claims the slot (job, occurrence) runs it.
		due := j.NextRun
		claim.DueAt, claim.Slot = &due, SlotKey(j.ID, due)
		if !s.claimSlot(ctx, sh, claim.Slot) {
			return
		}
	}
	runID, ok, err := s.o.Store.ClaimRun(ctx, claim)
	if err != nil || !ok {
		if err != nil {
			s.log.Warn("claim failed", "job", j.ID, "err", err)
		} else {
			s.log.Debug("job claimed elsewhere; not started", "job", j.ID)
		}
		if shared {
			if err := sh.DropSlot(context.WithoutCancel(ctx), claim.Slot, "not run: the job changed or was claimed before its run was recorded"); err != nil {
				s.log.Warn("unrun slot not ended", "job", j.ID, "slot", claim.Slot, "err", err)
			}
		}
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
		}
		defer func() {
			select {
			case <-s.slots:
			default:
			}
		}()
		s.runClaimed(ctx, j, runID, now, false, claim.Slot)
	}()
}

// result is the end of one run.
type result struct {
	success bool
	output  string
}

// runClaimed runs a claimed job, records the run and the job's next state, and ends its task.
func (s *Scheduler) runClaimed(ctx context.Context, j store.CronJob, runID int64, started time.Time, manual bool, slot string) (result, time.Time) {
	cfg := s.o.Config()
	if sh, ok := s.o.Store.(Shared); ok && slot != "" {
		// The claim is renewed while the run lasts; lost (this daemon was cut off longer than the ttl and
		// another recorded the run interrupted), the run is cancelled: its result can no longer be recorded.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		stop := s.extend(ctx, sh, j.ID, slot, cancel)
		defer func() { stop(); cancel() }()
	}
	taskID := s.o.NewID()
	alias, aliasErr := owner(cfg, j)
	if s.o.Tasks != nil {
		if err := s.o.Tasks.Begin(ctx, Task{ID: taskID, Kind: "cron", Agent: alias, Ref: fmt.Sprintf("cron:%s#%d", j.ID, runID),
			StartedAt: started}); err != nil {
			s.log.Warn("run not registered with the control plane", "job", j.ID, "err", err)
		}
	}
	var res result
	switch {
	case ctx.Err() != nil:
		res = result{output: "not started"}
	case aliasErr != nil:
		res = result{output: aliasErr.Error()}
	default:
		res = s.execute(ctx, cfg, alias, j)
	}
	if ctx.Err() != nil && !res.success {
		res.output = cancelledNote + "\n" + res.output
	}
	finished := s.o.Clock.Now()
	status := store.CronStatusOK
	if !res.success {
		status = store.CronStatusError
	}
	f := store.Finish{JobID: j.ID, RunID: runID, FinishedAt: finished, Status: status, Output: res.output,
		DurationMS: finished.Sub(started).Milliseconds(), KeepRuns: cfg.Scheduler.MaxRunHistory, Slot: slot}
	f.Action, f.NextRun = s.completion(j, res.success, finished, manual)
	durable := context.WithoutCancel(ctx)
	if err := s.o.Store.FinishRun(durable, f); err != nil {
		s.log.Warn("run result not fully recorded", "job", j.ID, "err", err)
	}
	if s.o.Tasks != nil {
		tstatus, errText := "completed", ""
		switch {
		case ctx.Err() != nil && !res.success:
			tstatus, errText = "cancelled", "cancelled"
		case !res.success:
			tstatus, errText = "failed", store.CapCronOutput(res.output)
		}
		if err := s.o.Tasks.End(durable, taskID, tstatus, store.CapCronOutput(res.output), errText); err != nil {
			s.log.Warn("task end not recorded", "job", j.ID, "err", err)
		}
	}
	if res.success {
		s.log.Info("job ran", "job", j.ID, "run", runID)
	} else {
		s.log.Warn("job failed", "job", j.ID, "run", runID)
	}
	return res, finished
}

// completion is upstream's rule: a successful one-shot with delete_after_run is deleted, another one-shot is
// disabled, a recurring job moves to its next occurrence after now (no burst replay). A manual run changes
// nothing but last_*.
func (s *Scheduler) completion(j store.CronJob, success bool, now time.Time, manual bool) (store.Completion, time.Time) {
	if manual {
		return store.CompleteRecord, time.Time{}
	}
	sc, err := scheduleOf(j)
	if err != nil {
		return store.CompleteDisable, time.Time{}
	}
	if sc.Kind == api.ScheduleAt {
		if j.DeleteAfterRun && success {
			return store.CompleteDelete, time.Time{}
		}
		return store.CompleteDisable, time.Time{}
	}
	next, err := s.sched.Next(sc, now)
	if err != nil {
		s.log.Warn("job has no next run; disabled", "job", j.ID, "err", err)
		return store.CompleteDisable, time.Time{}
	}
	return store.CompleteReschedule, next
}

// execute runs the job with upstream's retries: scheduler_retries extra attempts, the delay starting at
// max(provider_backoff_ms, 200 ms) plus jitter and doubling up to 30 s; a policy refusal is not retried.
func (s *Scheduler) execute(ctx context.Context, cfg *config.Config, alias string, j store.CronJob) result {
	if j.Source == store.CronSourceDeclarative {
		if _, ok := cfg.Cron[j.ID]; !ok {
			return result{output: fmt.Sprintf("cron job %q is an orphaned declarative entry (not in config); not run", j.ID)}
		}
	}
	retries := max(cfg.Reliability.SchedulerRetries, 0)
	backoff := max(time.Duration(cfg.Reliability.ProviderBackoffMS)*time.Millisecond, minBackoff)
	var res result
	for attempt := 0; ; attempt++ {
		switch j.JobType {
		case TypeAgent:
			res = s.runAgent(ctx, alias, j)
		default:
			res = s.runShell(ctx, cfg, alias, j)
		}
		if res.success || attempt >= retries || ctx.Err() != nil || hasPrefix(res.output, policyRefusal) {
			return res
		}
		t := s.o.Clock.NewTimer(backoff + s.o.Jitter())
		select {
		case <-ctx.Done():
			t.Stop()
			return res
		case <-t.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// owner is the agent a job runs as: its agent_alias when that names a configured agent, else the agent whose
// cron_jobs lists the job (upstream's resolve_owning_agent).
func owner(cfg *config.Config, j store.CronJob) (string, error) {
	if j.AgentAlias != "" {
		if _, ok := cfg.Agents[j.AgentAlias]; ok {
			return j.AgentAlias, nil
		}
	}
	for _, alias := range sortedAgents(cfg) {
		if slices.Contains(cfg.Agents[alias].CronJobs, j.ID) {
			return alias, nil
		}
	}
	if j.AgentAlias != "" {
		return "", fmt.Errorf("cron job %q: its agent %q is not configured; not run", j.ID, j.AgentAlias)
	}
	return "", fmt.Errorf("cron job %q has no owning agent; add its id to an [agents.<alias>] cron_jobs list", j.ID)
}

func sortedAgents(cfg *config.Config) []string {
	out := make([]string, 0, len(cfg.Agents))
	for a := range cfg.Agents {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
