package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// Turn is one unattended turn of the heartbeat: phase 1's decision (Completion nil) or one task (Completion
// is the heartbeat_complete tool the turn must be offered, and only this turn).
type Turn struct {
	Agent      string
	SessionID  string
	Prompt     string
	Completion *Completion
}

// Turner runs heartbeat turns; the daemon implements it over session.Manager.RunUnattended. A turn that did
// not complete is an error.
type Turner interface {
	RunUnattended(ctx context.Context, t Turn) (string, error)
}

// Target is where a message goes: a channel type (telegram, ...) and a recipient on it.
type Target struct{ Channel, To string }

// Notifier sends one message to a target (the daemon adapts the channel layer's notifier). It must honour ctx.
type Notifier interface {
	Send(ctx context.Context, target Target, text string) error
}

// Options are a Heartbeat's dependencies.
type Options struct {
	Store       *store.HeartbeatStore
	Config      func() *config.Config
	InstallRoot string // the agent workspace's default parent (workspace.Dir)
	Turns       Turner
	Notifier    Notifier // nil: alerts and announcements are logged only
	Clock       clock.Clock
	NewID       func() string
	Logger      *slog.Logger
	// Problem returns why the config in force has the heartbeat turned off ("" when nothing is wrong): the
	// [heartbeat] problem the daemon's start disabled.
	Problem func() string
	// History reads the chat history load_session_context prepends (nil: the key has no effect); Scrub
	// removes secrets from it (nil: none).
	History History
	Scrub   func(string) string
	// Leader, with several daemons on one shared database, says whether this daemon runs the heartbeat's
	// slots; nil: it always does.
	Leader Leader
}

// Leader gives the heartbeat of an agent to one daemon of those sharing a database: Lead reports whether this
// daemon holds (or has just taken) it for at least hold, renewing it when it does; when another daemon holds
// it, ok is false and holder names that daemon. A slot this daemon does not lead is recorded skipped, so no slot
// runs on two daemons and none goes without a record.
type Leader interface {
	Lead(ctx context.Context, agent string, hold time.Duration) (ok bool, holder string, err error)
}

// leadHold is how long a slot's leadership lasts: past the longest sleep to the next slot, so the leader keeps
// it from slot to slot and another daemon takes over only when the leader stopped leading.
func leadHold(hb config.HeartbeatConfig) time.Duration {
	longest := interval(hb)
	if hb.Adaptive {
		longest = max(longest, time.Duration(hb.MaxIntervalMinutes)*minute)
	}
	return 2*longest + minute
}

// MaxTasks is the most tasks one slot runs (high priority first); the others are noted in the slot's history.
const MaxTasks = 32

// maxTaskTextBytes bounds a task's text as the history keeps it (the prompt has it whole).
const maxTaskTextBytes = 4 << 10

func recordedText(s string) string {
	if len(s) <= maxTaskTextBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxTaskTextBytes], "") + "…"
}

// Interrupted is the output of a run the previous process did not finish.
const Interrupted = "interrupted: the daemon stopped during this run"

// DeadmanCheck is how often the dead-man switch is looked at between ticks (upstream's 60 s).
const DeadmanCheck = time.Minute

// sendTimeout bounds one notification (upstream's 30 s).
const sendTimeout = 30 * time.Second

// Heartbeat is the scheduler. Start it once; Changed after a config change; Close at shutdown.
type Heartbeat struct {
	o    Options
	log  *slog.Logger
	wake chan struct{} // a config change; buffered 1

	cancel context.CancelFunc
	wg     sync.WaitGroup

	schedMu   sync.Mutex // serializes update (lock order: schedMu, then mu)
	deadmanMu sync.Mutex // serializes deadman, so one episode is alerted once

	mu sync.Mutex // guards the fields below
	st status
}

// status is what Status reports, and the loop's memory between ticks.
type status struct {
	prepared   bool // the history was reconciled for this enable (interrupted runs closed, missed slots recorded)
	sch        store.HeartbeatSchedule
	running    bool
	lastSlot   time.Time
	lastStatus string
	failures   int      // consecutive failed slots
	err        string   // the last failure's reason
	runs       [4]int64 // slot outcomes since the daemon started: ok, error, skipped, missed (for /metrics)
}

// outcomes are the slot outcomes counted for /metrics, in the order of status.runs.
var outcomes = [4]string{store.HeartbeatOK, store.HeartbeatError, store.HeartbeatSkipped, store.HeartbeatMissed}

func (s *status) count(outcome string, n int64) {
	for i, o := range outcomes {
		if o == outcome {
			s.runs[i] += n
		}
	}
}

// New makes a Heartbeat, not started.
func New(o Options) *Heartbeat {
	o.Clock = clock.OrReal(o.Clock)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NewID == nil {
		o.NewID = func() string { return fmt.Sprintf("%d", o.Clock.Now().UnixNano()) }
	}
	return &Heartbeat{o: o, log: o.Logger.With("component", "heartbeat"), wake: make(chan struct{}, 1)}
}

// Start runs the loop until Close. It returns at once.
func (h *Heartbeat) Start(ctx context.Context) {
	ctx, h.cancel = context.WithCancel(ctx)
	h.wg.Add(2)
	go func() {
		defer h.wg.Done()
		h.loop(ctx)
	}()
	go func() {
		defer h.wg.Done()
		h.watch(ctx)
	}()
}

// Changed tells the loop the config changed (interval, agent, on or off); it never blocks.
func (h *Heartbeat) Changed() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close stops the loop and waits for it; a task running now is cancelled and recorded as error.
func (h *Heartbeat) Close() {
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
}

// minute is the unit of every [heartbeat] duration: a minute, except in a test build that scales it
// (hook_scale.go) so the real binary can be driven through slots in seconds.
var minute = time.Minute

func interval(c config.HeartbeatConfig) time.Duration {
	return time.Duration(max(c.IntervalMinutes, 1)) * minute
}

func (h *Heartbeat) loop(ctx context.Context) {
	for {
		cfg := h.o.Config()
		hb := cfg.Heartbeat
		var slot <-chan time.Time
		var stops []*clock.Timer
		if hb.Enabled {
			next, err := h.prepare(ctx, hb)
			if err != nil {
				h.fail("history: " + err.Error())
				h.log.Warn("heartbeat history unavailable", "err", err)
			}
			if !next.IsZero() {
				t := h.o.Clock.NewTimer(next.Sub(h.o.Clock.Now()))
				slot, stops = t.C, append(stops, t)
			}
		} else {
			h.mu.Lock()
			h.st.prepared = false
			h.mu.Unlock()
		}
		var fired string
		select {
		case <-ctx.Done():
			fired = "done"
		case <-h.wake:
			fired = "config"
		case <-slot:
			fired = "slot"
		}
		for _, t := range stops {
			t.Stop()
		}
		switch fired {
		case "done":
			return
		case "slot":
			h.runSlot(ctx, cfg)
		}
	}
}

// prepare reconciles the history once per enable (runs the last process left running are closed as error,
// slots that came while the daemon was down are recorded missed, the dead-man switch is looked at) and returns
// the next slot. A changed interval moves the next slot to one interval from now.
func (h *Heartbeat) prepare(ctx context.Context, hb config.HeartbeatConfig) (time.Time, error) {
	h.mu.Lock()
	prepared, sch := h.st.prepared, h.st.sch
	h.mu.Unlock()
	now := h.o.Clock.Now()
	iv := interval(hb)
	if prepared {
		if sch.Interval != iv {
			sch, err := h.update(ctx, func(s *store.HeartbeatSchedule) { s.Interval, s.NextSlotAt = iv, now.Add(iv) })
			return sch.NextSlotAt, err
		}
		return sch.NextSlotAt, nil
	}
	st := h.o.Store
	if n, err := st.CloseRunning(ctx, Interrupted, now); err != nil {
		return time.Time{}, err
	} else if n > 0 {
		h.log.Warn("heartbeat runs interrupted by the previous stop recorded as error", "runs", n)
		h.mu.Lock()
		h.st.lastStatus, h.st.err = store.HeartbeatError, Interrupted
		h.mu.Unlock()
	}
	sch, ok, err := st.Schedule(ctx)
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case !ok:
		sch = store.HeartbeatSchedule{NextSlotAt: now.Add(iv), Interval: iv, LastOKAt: now}
	case !sch.NextSlotAt.After(now):
		if err := h.recordMissed(ctx, sch, hb, now); err != nil {
			return time.Time{}, err
		}
		sch.NextSlotAt, sch.Interval = now.Add(iv), iv // upstream sleeps first: no run at start
	case sch.Interval != iv:
		sch.NextSlotAt, sch.Interval = now.Add(iv), iv
	}
	if _, err := h.update(ctx, func(s *store.HeartbeatSchedule) { *s = sch }); err != nil {
		return time.Time{}, err
	}
	h.mu.Lock()
	h.st.prepared = true
	h.mu.Unlock()
	h.deadman(ctx, hb) // a daemon down past the timeout alerts at once
	return sch.NextSlotAt, nil
}

// recordMissed writes a missed row for every slot from sch.NextSlotAt up to now that has no outcome, stepping by
// the interval it was planned with; only the newest max_run_history of them (the rest would be pruned).
func (h *Heartbeat) recordMissed(ctx context.Context, sch store.HeartbeatSchedule, hb config.HeartbeatConfig, now time.Time) error {
	step := sch.Interval
	if step <= 0 {
		step = interval(hb)
	}
	keep := max(hb.MaxRunHistory, 1)
	s := sch.NextSlotAt
	if n := int(now.Sub(s) / step); n >= keep {
		s = s.Add(time.Duration(n-keep+1) * step)
	}
	missed := 0
	for ; !s.After(now); s = s.Add(step) {
		done, err := h.o.Store.HasSlot(ctx, s)
		if err != nil {
			return err
		}
		if done {
			continue
		}
		if _, err := h.o.Store.Insert(ctx, store.HeartbeatRun{SlotAt: s, StartedAt: s, FinishedAt: s,
			Status: store.HeartbeatMissed, Output: "missed: the daemon was not running"}, keep); err != nil {
			return err
		}
		missed++
	}
	if missed > 0 {
		h.log.Warn("heartbeat slots missed while the daemon was down", "slots", missed)
		h.mu.Lock()
		h.st.lastStatus, h.st.failures, h.st.err = store.HeartbeatMissed, h.st.failures+missed, "slots missed while the daemon was down"
		h.st.count(store.HeartbeatMissed, int64(missed))
		h.mu.Unlock()
	}
	return nil
}

// update changes the schedule row, in memory and in history.db. schedMu serializes the loop's changes with
// the dead-man watch's, so neither overwrites the other's.
func (h *Heartbeat) update(ctx context.Context, fn func(*store.HeartbeatSchedule)) (store.HeartbeatSchedule, error) {
	h.schedMu.Lock()
	defer h.schedMu.Unlock()
	h.mu.Lock()
	sch := h.st.sch
	h.mu.Unlock()
	fn(&sch)
	h.mu.Lock()
	h.st.sch = sch
	h.mu.Unlock()
	return sch, h.o.Store.SetSchedule(ctx, sch)
}

func (h *Heartbeat) fail(reason string) {
	h.mu.Lock()
	h.st.err = reason
	h.mu.Unlock()
}

// runSlot runs the slot that is due and records its outcome, then plans the next one.
func (h *Heartbeat) runSlot(ctx context.Context, cfg *config.Config) {
	hb := cfg.Heartbeat
	h.mu.Lock()
	slot := h.st.sch.NextSlotAt
	h.st.running = true
	h.mu.Unlock()
	rec := context.WithoutCancel(ctx) // an outcome is recorded even when the stop cut the run
	res := h.tick(ctx, cfg, slot)
	now := h.o.Clock.Now()
	h.mu.Lock()
	h.st.lastSlot, h.st.lastStatus = slot, res.status
	h.st.count(res.status, 1)
	good := res.status != store.HeartbeatError
	if good {
		h.st.failures, h.st.err = 0, ""
	} else {
		h.st.failures++
		h.st.err = res.reason
	}
	failures := h.st.failures
	h.mu.Unlock()
	if _, err := h.update(rec, func(s *store.HeartbeatSchedule) {
		if good {
			s.LastOKAt, s.AlertSentAt = now, time.Time{} // a good tick ends a dead-man episode
		}
		s.Interval = interval(hb)
		s.NextSlotAt = now.Add(NextInterval(hb, failures, res.high))
	}); err != nil {
		h.log.Warn("heartbeat schedule not saved", "err", err)
	}
	h.deadman(rec, hb) // at once after a slot, besides the watch's minute
	// Running ends only here, so a caller that waits for the slot to end (status, a test) also sees its
	// dead-man check done.
	h.mu.Lock()
	h.st.running = false
	h.mu.Unlock()
}

// NextInterval is the sleep before the next slot (upstream's compute_adaptive_interval): the interval, or
// with adaptive, the interval doubled per consecutive failure (up to 2^10) within [min, max], else
// max(min, 5) minutes when a high-priority task is runnable, else the interval within [min, max].
func NextInterval(hb config.HeartbeatConfig, failures int, highTask bool) time.Duration {
	base := interval(hb)
	if !hb.Adaptive {
		return base
	}
	lo := time.Duration(hb.MinIntervalMinutes) * minute
	hi := time.Duration(hb.MaxIntervalMinutes) * minute
	clamp := func(d time.Duration) time.Duration { return max(lo, min(d, hi)) }
	switch {
	case failures > 0:
		return clamp(base * time.Duration(1<<min(failures, 10)))
	case highTask:
		return max(lo, 5*minute)
	}
	return clamp(base)
}

// tickResult is a slot's outcome: error if any task failed, else ok, or skipped when nothing ran.
type tickResult struct {
	status string
	reason string
	high   bool // a high-priority task was runnable
}

func (h *Heartbeat) tick(ctx context.Context, cfg *config.Config, slot time.Time) tickResult {
	hb := cfg.Heartbeat
	keep := max(hb.MaxRunHistory, 1)
	rec := context.WithoutCancel(ctx)
	started := h.o.Clock.Now()
	whole := func(status, task, out string) tickResult {
		if _, err := h.o.Store.Insert(rec, store.HeartbeatRun{SlotAt: slot, TaskText: task, StartedAt: started,
			FinishedAt: h.o.Clock.Now(), Status: status, Output: out}, keep); err != nil {
			h.log.Warn("heartbeat run not recorded", "err", err)
		}
		return tickResult{status: status, reason: out}
	}
	if h.o.Leader != nil {
		ok, holder, err := h.o.Leader.Lead(ctx, hb.Agent, leadHold(hb))
		switch {
		case err != nil: // not knowing who leads, run nothing: a slot must not run twice
			return whole(store.HeartbeatError, "", "shared backend: who runs the heartbeat is unknown: "+err.Error())
		case !ok:
			return whole(store.HeartbeatSkipped, "", "run by another daemon sharing the database ("+holder+")")
		}
	}
	dir, err := workspace.Dir(cfg, h.o.InstallRoot, hb.Agent)
	if err != nil {
		return whole(store.HeartbeatError, FileName, err.Error())
	}
	content, err := ReadFile(dir)
	if err != nil {
		return whole(store.HeartbeatError, FileName, err.Error())
	}
	tasks := Runnable(ParseTasks(content))
	if len(tasks) == 0 && strings.TrimSpace(hb.Message) != "" {
		tasks = []Task{{Text: strings.TrimSpace(hb.Message), Priority: Medium, Status: Active}}
	}
	if len(tasks) == 0 {
		return whole(store.HeartbeatSkipped, "", "no runnable task in HEARTBEAT.md")
	}
	if n := len(tasks); n > MaxTasks {
		// A file of thousands of tasks must not become thousands of model calls every slot.
		h.log.Warn("HEARTBEAT.md lists more runnable tasks than a slot runs; the rest wait", "tasks", n, "max", MaxTasks)
		if _, err := h.o.Store.Insert(rec, store.HeartbeatRun{SlotAt: slot, TaskText: FileName, StartedAt: started,
			FinishedAt: started, Status: store.HeartbeatSkipped,
			Output: fmt.Sprintf("%d runnable tasks: only the first %d run in a slot", n, MaxTasks)}, keep); err != nil {
			h.log.Warn("heartbeat run not recorded", "err", err)
		}
		tasks = tasks[:MaxTasks]
	}
	high := tasks[0].Priority == High
	chosen := tasks
	if hb.TwoPhase {
		answer, err := h.turn(ctx, hb, Turn{Agent: hb.Agent, SessionID: "heartbeat-" + h.o.NewID(), Prompt: DecisionPrompt(tasks, started)})
		if err != nil {
			// Upstream runs every task when the decision fails; a failing provider would then be asked once per
			// task. Here the slot fails instead, naming the decision's error.
			r := whole(store.HeartbeatError, "phase 1 decision", "phase 1 decision failed: "+err.Error())
			r.high = high
			return r
		}
		chosen = nil
		for _, i := range ParseDecision(answer, len(tasks)) {
			chosen = append(chosen, tasks[i])
		}
		if len(chosen) == 0 {
			r := whole(store.HeartbeatSkipped, "", "phase 1 chose no task")
			r.high = high
			return r
		}
	}
	res := tickResult{status: store.HeartbeatOK, high: high}
	for _, t := range chosen {
		status, out := h.runTask(ctx, hb, slot, t, keep)
		if status != store.HeartbeatOK && res.status == store.HeartbeatOK {
			res.status, res.reason = status, t.Text+": "+out
		}
	}
	return res
}

// runTask runs one task as an unattended turn offered heartbeat_complete. It is ok only if the tool was called.
func (h *Heartbeat) runTask(ctx context.Context, hb config.HeartbeatConfig, slot time.Time, t Task, keep int) (string, string) {
	rec := context.WithoutCancel(ctx)
	start := h.o.Clock.Now()
	id, err := h.o.Store.Insert(rec, store.HeartbeatRun{SlotAt: slot, TaskText: recordedText(t.Text), TaskPriority: string(t.Priority),
		StartedAt: start, FinishedAt: start, Status: store.HeartbeatRunning}, keep)
	if err != nil {
		// Without its running row a crash would leave no trace of the run: do not start it.
		h.log.Warn("heartbeat run not recorded; task not run", "err", err)
		return store.HeartbeatError, "history: " + err.Error()
	}
	c := &Completion{}
	prompt := TaskPrompt(t)
	if hb.LoadSessionContext {
		if sc := h.sessionContext(ctx, strings.TrimSpace(hb.Target), strings.TrimSpace(hb.To)); sc != "" {
			prompt = sc + "\n" + prompt
		}
	}
	answer, err := h.turn(ctx, hb, Turn{Agent: hb.Agent, SessionID: "heartbeat-" + h.o.NewID(), Prompt: prompt, Completion: c})
	status, out := store.HeartbeatOK, answer
	done, summary := c.Done()
	switch {
	case ctx.Err() != nil:
		status, out = store.HeartbeatError, "interrupted: the daemon stopped during this run"
	case err != nil:
		status, out = store.HeartbeatError, err.Error()
	case !done:
		status, out = store.HeartbeatError, "not completed: the agent answered without calling "+CompleteTool+": "+answer
	case strings.TrimSpace(answer) == "":
		out = summary
	}
	end := h.o.Clock.Now()
	if err := h.o.Store.Finish(rec, id, status, out, end, end.Sub(start).Milliseconds()); err != nil {
		h.log.Warn("heartbeat run outcome not recorded", "err", err)
	}
	if status == store.HeartbeatOK {
		h.announce(rec, hb, t, summary, answer)
	}
	return status, out
}

// turn runs one heartbeat turn under task_timeout_secs.
func (h *Heartbeat) turn(ctx context.Context, hb config.HeartbeatConfig, t Turn) (string, error) {
	if hb.TaskTimeoutSecs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(hb.TaskTimeoutSecs)*time.Second)
		defer cancel()
	}
	answer, err := h.o.Turns.RunUnattended(ctx, t)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return answer, fmt.Errorf("Heartbeat task timed out (%ds)", hb.TaskTimeoutSecs)
	}
	return answer, err
}

// announce sends a completed task's result to heartbeat.target/to (upstream's announcement; NO_REPLY
// answers are kept quiet).
func (h *Heartbeat) announce(ctx context.Context, hb config.HeartbeatConfig, t Task, summary, answer string) {
	target := Target{Channel: strings.TrimSpace(hb.Target), To: strings.TrimSpace(hb.To)}
	if target.Channel == "" || h.o.Notifier == nil || noReply(answer) {
		return
	}
	text := strings.TrimSpace(answer)
	if text == "" {
		text = summary
	}
	if text == "" {
		text = "💓 heartbeat task completed: " + t.Text
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := h.o.Notifier.Send(ctx, target, text); err != nil {
		h.log.Warn("heartbeat announcement not delivered", "channel", target.Channel, "err", err)
	}
}

// noReply reports upstream's NO_REPLY sentinel: NO_REPLY, NO_REPLY: ..., NO_REPLY[...]: ... (any case).
func noReply(s string) bool {
	u := strings.ToUpper(strings.TrimSpace(s))
	rest, ok := strings.CutPrefix(u, "NO_REPLY")
	return ok && (rest == "" || strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "["))
}
