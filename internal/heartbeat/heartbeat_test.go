package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

const guard = 10 * time.Second // bound on a hung test, not a timing assertion

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// script answers heartbeat turns: decide answers phase 1; task answers a task turn and may call the tool.
type script struct {
	mu       sync.Mutex
	prompts  []string
	decide   func() (string, error)
	task     func(tk Turn) (string, error)
	sessions map[string]bool
}

func (s *script) RunUnattended(ctx context.Context, tk Turn) (string, error) {
	s.mu.Lock()
	s.prompts = append(s.prompts, tk.Prompt)
	if s.sessions == nil {
		s.sessions = map[string]bool{}
	}
	s.sessions[tk.SessionID] = true
	s.mu.Unlock()
	if strings.HasPrefix(tk.Prompt, "[Heartbeat Task | decision]") {
		if tk.Completion != nil {
			return "", errors.New("the decision turn was offered heartbeat_complete")
		}
		return s.decide()
	}
	if tk.Completion == nil {
		return "", errors.New("a task turn without heartbeat_complete")
	}
	return s.task(tk)
}

func (s *script) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.prompts...)
}

func complete(tk Turn, summary string) {
	args, _ := json.Marshal(map[string]string{"summary": summary})
	tk.Completion.Call(context.Background(), tools.Call{Name: CompleteTool, Arguments: args}, 0)
}

type sent struct {
	target Target
	text   string
}

type notifier struct {
	mu   sync.Mutex
	msgs []sent
	err  error
}

func (n *notifier) Send(_ context.Context, t Target, text string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return n.err
	}
	n.msgs = append(n.msgs, sent{t, text})
	return nil
}

func (n *notifier) alerts() []sent {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []sent
	for _, m := range n.msgs {
		if strings.Contains(m.text, "dead-man") {
			out = append(out, m)
		}
	}
	return out
}

type harness struct {
	t       *testing.T
	history History
	scrub   func(string) string
	leader  Leader
	clk     *clocktest.Manual
	ws      string
	db      string
	cfg     *config.Config
	turns   *script
	note    *notifier
	st      *store.HeartbeatStore
	hb      *Heartbeat
	stop    context.CancelFunc
}

func newHarness(t *testing.T, mod func(*config.HeartbeatConfig)) *harness {
	t.Helper()
	cfg := config.Default()
	ws := t.TempDir()
	a := cfg.Agents["default"]
	a.Workspace.Path = ws
	cfg.Agents["default"] = a
	cfg.Heartbeat = config.DefaultHeartbeat()
	cfg.Heartbeat.Enabled, cfg.Heartbeat.Agent, cfg.Heartbeat.TwoPhase = true, "default", false
	if mod != nil {
		mod(&cfg.Heartbeat)
	}
	h := &harness{t: t, clk: clocktest.New(t0), ws: ws, db: filepath.Join(t.TempDir(), "heartbeat", "history.db"), cfg: cfg,
		turns: &script{}, note: &notifier{}}
	return h
}

func (h *harness) start() {
	h.t.Helper()
	h.st = store.OpenHeartbeat(h.db)
	n := 0
	h.hb = New(Options{Store: h.st, Config: func() *config.Config { return h.cfg }, Turns: h.turns, Notifier: h.note,
		Clock: h.clk, NewID: func() string { n++; return strings.Repeat("x", n) }, History: h.history, Scrub: h.scrub,
		Leader: h.leader})
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	h.hb.Start(ctx)
	h.t.Cleanup(h.close)
}

func (h *harness) close() {
	if h.hb == nil {
		return
	}
	h.stop()
	h.hb.Close()
	_ = h.st.Close()
	h.hb = nil
}

func (h *harness) write(content string) {
	if err := os.WriteFile(filepath.Join(h.ws, FileName), []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// slot waits for the timer of the next slot (d from now), fires it and waits until the slot after it is armed.
func (h *harness) slot(d time.Duration) {
	h.t.Helper()
	if !h.clk.WaitTimer(d, guard) {
		h.t.Fatalf("no slot timer of %v armed", d)
	}
	h.clk.Advance(d)
	h.waitIdle()
}

// waitIdle waits until the loop has planned its next slot after the one in progress.
func (h *harness) waitIdle() {
	h.t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		s := h.hb.Status()
		if !s.Running && s.NextSlotAt != "" {
			if at, _ := time.Parse(time.RFC3339Nano, s.NextSlotAt); at.After(h.clk.Now()) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatalf("the slot did not finish: status %+v now %v timers %d runs %+v", h.hb.Status(), h.clk.Now(), h.clk.Timers(), h.runs())
}

func (h *harness) runs() []store.HeartbeatRun {
	h.t.Helper()
	r, err := h.st.Runs(context.Background(), 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// An empty or comment-only HEARTBEAT.md makes no model call, and its slot is recorded skipped.
func TestEmptyFileSkipsWithoutModelCall(t *testing.T) {
	for name, content := range map[string]string{"missing": "", "default": DefaultFile, "prose": "# Notes\nnothing to do\n* star\n"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			if content != "" {
				h.write(content)
			}
			h.turns.task = func(Turn) (string, error) { t.Error("a model call for a task-less file"); return "", nil }
			h.start()
			h.slot(30 * time.Minute)
			runs := h.runs()
			if len(runs) != 1 || runs[0].Status != store.HeartbeatSkipped || !runs[0].SlotAt.Equal(t0.Add(30*time.Minute)) {
				t.Fatalf("runs = %+v, want one skipped row for the slot", runs)
			}
			if c := h.turns.calls(); len(c) != 0 {
				t.Fatalf("model calls: %q", c)
			}
		})
	}
}

// A task is ok only when the agent called heartbeat_complete: an answer alone, an error or a timeout is a
// failed run, with the reason recorded.
func TestRunIsOKOnlyWithCompletionTool(t *testing.T) {
	h := newHarness(t, func(c *config.HeartbeatConfig) { c.TaskTimeoutSecs = 0 })
	h.write("- [low] answer only\n- [high] do the work\n- broken provider\n")
	h.turns.task = func(tk Turn) (string, error) {
		switch {
		case strings.HasSuffix(tk.Prompt, "do the work"):
			complete(tk, "checked the queue")
			return "all good", nil
		case strings.HasSuffix(tk.Prompt, "answer only"):
			return "Done! I checked everything.", nil
		}
		return "", errors.New("provider: 503")
	}
	h.start()
	h.slot(30 * time.Minute)
	got := map[string]store.HeartbeatRun{}
	for _, r := range h.runs() {
		got[r.TaskText] = r
	}
	if r := got["do the work"]; r.Status != store.HeartbeatOK || r.Output != "all good" || r.TaskPriority != "high" {
		t.Errorf("completed task: %+v", r)
	}
	if r := got["answer only"]; r.Status != store.HeartbeatError || !strings.Contains(r.Output, "without calling heartbeat_complete") {
		t.Errorf("answered without the tool: %+v", r)
	}
	if r := got["broken provider"]; r.Status != store.HeartbeatError || !strings.Contains(r.Output, "503") {
		t.Errorf("failed turn: %+v", r)
	}
	if c := h.turns.calls(); len(c) != 3 || c[0] != "[Heartbeat Task | high] do the work" || c[2] != "[Heartbeat Task | low] answer only" {
		t.Errorf("prompts = %q, want high first, low last", c)
	}
	if s := h.hb.Status(); s.LastStatus != store.HeartbeatError || s.ConsecutiveFailures != 1 {
		t.Errorf("status = %+v", s)
	}
	if m := h.hb.Metrics(); !m.Enabled || m.Runs[store.HeartbeatError] != 1 || m.Runs[store.HeartbeatOK] != 0 || m.Deadman {
		t.Errorf("metrics after one failed slot = %+v", m)
	}
	if len(h.turns.sessions) != 3 {
		t.Errorf("each task runs in a fresh session: %v", h.turns.sessions)
	}
}

// Two-phase: the decision picks tasks; "skip" records a skipped slot; a failed decision fails the slot and
// runs no task (upstream would run them all against a failing provider).
func TestTwoPhase(t *testing.T) {
	h := newHarness(t, func(c *config.HeartbeatConfig) { c.TwoPhase = true })
	h.write("- first\n- second\n")
	decisions := []func() (string, error){
		func() (string, error) { return "run: 2", nil },
		func() (string, error) { return "skip", nil },
		func() (string, error) { return "", errors.New("provider down") },
	}
	i := 0
	h.turns.decide = func() (string, error) { d := decisions[i]; i++; return d() }
	h.turns.task = func(tk Turn) (string, error) { complete(tk, "ok"); return "", nil }
	h.start()
	for range 3 {
		h.slot(30 * time.Minute)
	}
	runs := h.runs()
	if len(runs) != 3 {
		t.Fatalf("runs = %+v", runs)
	}
	if r := runs[2]; r.TaskText != "second" || r.Status != store.HeartbeatOK || r.Output != "ok" {
		t.Errorf("slot 1: %+v", r)
	}
	if r := runs[1]; r.Status != store.HeartbeatSkipped || r.Output != "phase 1 chose no task" {
		t.Errorf("slot 2: %+v", r)
	}
	if r := runs[0]; r.Status != store.HeartbeatError || !strings.Contains(r.Output, "provider down") {
		t.Errorf("slot 3: %+v", r)
	}
	var tasks int
	for _, p := range h.turns.calls() {
		if !strings.HasPrefix(p, "[Heartbeat Task | decision]") {
			tasks++
		}
	}
	if tasks != 1 {
		t.Fatalf("%d task turns, want 1 (only the chosen one, none after a failed decision)", tasks)
	}
}

// Slots that came while the daemon was down are recorded missed at start; a run the previous process did not
// finish is recorded error; no slot runs twice; the next slot is one interval after the start.
func TestMissedAndInterruptedSlotsAcrossRestart(t *testing.T) {
	h := newHarness(t, nil)
	h.write("- work\n")
	block := make(chan struct{})
	entered := make(chan struct{})
	h.turns.task = func(tk Turn) (string, error) {
		close(entered)
		<-block // the process "dies" here
		return "", errors.New("never")
	}
	h.start()
	if !h.clk.WaitTimer(30*time.Minute, guard) {
		t.Fatal("no first slot")
	}
	h.clk.Advance(30 * time.Minute)
	<-entered
	// kill: the loop is abandoned with its run row still running (a new Heartbeat on the same file, as a new
	// process would be). The old store stays open like a dead process's file would be closed: close it.
	runs := h.runs()
	if len(runs) != 1 || runs[0].Status != store.HeartbeatRunning {
		t.Fatalf("before the kill: %+v", runs)
	}
	hbOld, stOld, stopOld := h.hb, h.st, h.stop
	h.hb = nil
	defer func() { stopOld(); close(block); hbOld.Close(); _ = stOld.Close() }()

	// Down for 100 minutes (until +130). The old process died in slot +30, before planning the next, so the
	// schedule still names +30: it has a row (the interrupted run); +60, +90 and +120 are missed.
	h.clk.Advance(100 * time.Minute)
	completed := 0
	h.turns = &script{task: func(tk Turn) (string, error) { completed++; complete(tk, "done"); return "", nil }}
	h.start()
	h.waitIdle()
	runs = h.runs()
	var statuses []string
	for _, r := range runs {
		statuses = append(statuses, r.Status+"@"+r.SlotAt.Sub(t0).String())
	}
	want := []string{"missed@2h0m0s", "missed@1h30m0s", "missed@1h0m0s", "error@30m0s"}
	if strings.Join(statuses, " ") != strings.Join(want, " ") {
		t.Fatalf("history = %v, want %v", statuses, want)
	}
	if runs[3].Output != Interrupted {
		t.Fatalf("interrupted row: %+v", runs[3])
	}
	if completed != 0 {
		t.Fatal("a slot ran at start (upstream sleeps first; the interrupted slot is not run again)")
	}
	s := h.hb.Status()
	if want := t0.Add(160 * time.Minute).Format(time.RFC3339Nano); s.NextSlotAt != want {
		t.Fatalf("next slot %s, want %s", s.NextSlotAt, want)
	}
	h.slot(30 * time.Minute)
	if completed != 1 || h.runs()[0].Status != store.HeartbeatOK {
		t.Fatalf("after restart: %d runs completed, history %+v", completed, h.runs()[0])
	}
}

// A restart before the next slot keeps the schedule: nothing missed, the slot comes when it was planned.
func TestRestartKeepsSchedule(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	h.slot(30 * time.Minute)
	h.close()
	h.clk.Advance(10 * time.Minute)
	h.start()
	h.waitIdle()
	if runs := h.runs(); len(runs) != 1 {
		t.Fatalf("runs after a restart within the interval: %+v", runs)
	}
	h.slot(20 * time.Minute)
	if runs := h.runs(); len(runs) != 2 || !runs[0].SlotAt.Equal(t0.Add(60*time.Minute)) {
		t.Fatalf("runs = %+v", runs)
	}
}

// The dead-man switch alerts once per episode of failing slots (not every minute), survives a restart without
// alerting again, and a good slot ends the episode so the next one alerts again.
func TestDeadmanOncePerEpisode(t *testing.T) {
	h := newHarness(t, func(c *config.HeartbeatConfig) {
		c.IntervalMinutes, c.DeadmanTimeoutMinutes, c.DeadmanChannel, c.DeadmanTo = 10, 25, "telegram", "42"
	})
	h.write("- work\n")
	fail := true
	h.turns.task = func(tk Turn) (string, error) {
		if fail {
			return "", errors.New("broken")
		}
		complete(tk, "fine")
		return "", nil
	}
	h.start()
	for range 2 {
		h.slot(10 * time.Minute)
	}
	if n := len(h.note.alerts()); n != 0 {
		t.Fatalf("%d alerts at 20 minutes, want none before 25", n)
	}
	h.slot(10 * time.Minute) // 30 minutes without a good tick
	// The loop arms the next slot's timer from the clock it reads: let it do so before the clock moves on,
	// or the timer lands past 40 minutes.
	if !h.clk.WaitTimer(10*time.Minute, guard) {
		t.Fatal("the next slot's timer was not armed")
	}
	for range 5 { // the 60 s checks while still stale
		if !h.clk.WaitTimer(DeadmanCheck, guard) {
			t.Fatal("no dead-man check armed")
		}
		h.clk.Advance(DeadmanCheck)
	}
	h.clk.Advance(5 * time.Minute) // the rest of the 10-minute slot timer
	h.waitIdle()
	a := h.note.alerts()
	if len(a) != 1 || a[0].target != (Target{"telegram", "42"}) || !strings.Contains(a[0].text, "no successful tick in 30 minutes") {
		t.Fatalf("alerts = %+v, want exactly one to telegram:42", a)
	}
	h.close()
	h.start()
	h.slot(10 * time.Minute)
	if n := len(h.note.alerts()); n != 1 {
		t.Fatalf("%d alerts after a restart in the same episode, want 1", n)
	}
	fail = false
	h.slot(10 * time.Minute)
	if s := h.hb.Status(); s.DeadmanAlertAt != "" || s.ConsecutiveFailures != 0 {
		t.Fatalf("a good tick did not end the episode: %+v", s)
	}
	fail = true
	for range 3 {
		h.slot(10 * time.Minute)
	}
	if n := len(h.note.alerts()); n != 2 {
		t.Fatalf("%d alerts, want a second one for the second episode; status %+v runs %+v", n, h.hb.Status(), h.runs()[:4])
	}
}

// A daemon down past the dead-man timeout alerts at start (the worker never ticking is an episode too).
func TestDeadmanAtStartAfterDowntime(t *testing.T) {
	h := newHarness(t, func(c *config.HeartbeatConfig) { c.DeadmanTimeoutMinutes, c.Target, c.To = 45, "telegram", "7" })
	h.start()
	h.slot(30 * time.Minute)
	h.close()
	h.clk.Advance(3 * time.Hour)
	h.start()
	h.waitIdle()
	deadline := time.Now().Add(guard)
	for len(h.note.alerts()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if a := h.note.alerts(); len(a) != 1 || a[0].target != (Target{"telegram", "7"}) {
		t.Fatalf("alerts = %+v", a)
	}
	runs := h.runs()
	if runs[0].Status != store.HeartbeatMissed {
		t.Fatalf("newest row %+v, want missed", runs[0])
	}
}

// A config change reschedules: off stops the slots, a new interval moves the next slot.
func TestReconfigure(t *testing.T) {
	h := newHarness(t, nil)
	h.start()
	if !h.clk.WaitTimer(30*time.Minute, guard) {
		t.Fatal("no slot")
	}
	cfg := *h.cfg
	cfg.Heartbeat.IntervalMinutes = 5
	h.cfg = &cfg
	h.hb.Changed()
	if !h.clk.WaitTimer(5*time.Minute, guard) {
		t.Fatal("the new interval was not applied")
	}
	off := cfg
	off.Heartbeat.Enabled = false
	h.cfg = &off
	h.hb.Changed()
	deadline := time.Now().Add(guard)
	for h.clk.Timers() != 1 && time.Now().Before(deadline) { // the dead-man watch's minute stays
		time.Sleep(time.Millisecond)
	}
	if h.clk.WaitTimer(5*time.Minute, 100*time.Millisecond) || h.clk.Timers() != 1 {
		t.Fatalf("a slot is still armed with the heartbeat off (%d timers)", h.clk.Timers())
	}
	if s := h.hb.Status(); s.Enabled || s.NextSlotAt != "" {
		t.Fatalf("status = %+v", s)
	}
}

func TestNextIntervalAdaptive(t *testing.T) {
	hb := config.DefaultHeartbeat()
	if d := NextInterval(hb, 3, true); d != 30*time.Minute {
		t.Fatalf("not adaptive: %v", d)
	}
	hb.Adaptive = true
	for _, c := range []struct {
		failures int
		high     bool
		want     time.Duration
	}{{0, false, 30 * time.Minute}, {0, true, 5 * time.Minute}, {1, true, 60 * time.Minute}, {2, false, 120 * time.Minute},
		{40, false, 120 * time.Minute}} {
		if d := NextInterval(hb, c.failures, c.high); d != c.want {
			t.Errorf("NextInterval(f=%d, high=%v) = %v, want %v", c.failures, c.high, d, c.want)
		}
	}
	hb.MinIntervalMinutes = 1
	if d := NextInterval(hb, 0, true); d != 5*time.Minute {
		t.Errorf("high priority below 5 minutes: %v", d)
	}
}

// A hostile HEARTBEAT.md of thousands of tasks runs MaxTasks of them per slot (high first), says so in the
// history, and a huge task's text is kept bounded there.
func TestTaskFloodIsBounded(t *testing.T) {
	h := newHarness(t, nil)
	var b strings.Builder
	b.WriteString("- [high] " + strings.Repeat("y", 64<<10) + "\n")
	for i := range 500 {
		b.WriteString("- t" + strings.Repeat("x", i%7) + "\n")
	}
	h.write(b.String())
	var mu sync.Mutex
	turns := 0
	h.turns.task = func(tk Turn) (string, error) {
		mu.Lock()
		turns++
		mu.Unlock()
		complete(tk, "")
		return "done", nil
	}
	h.start()
	h.slot(30 * time.Minute)
	if turns != MaxTasks {
		t.Fatalf("%d task turns in a slot, want %d", turns, MaxTasks)
	}
	runs := h.runs()
	if len(runs) != MaxTasks+1 {
		t.Fatalf("%d rows, want %d tasks and one note", len(runs), MaxTasks+1)
	}
	var note, long bool
	for _, r := range runs {
		if r.Status == store.HeartbeatSkipped && strings.Contains(r.Output, "501 runnable tasks") {
			note = true
		}
		if r.TaskPriority == "high" {
			long = len(r.TaskText) <= maxTaskTextBytes+len("…") && strings.HasPrefix(r.TaskText, "yyy")
		}
	}
	if !note || !long {
		t.Fatalf("note %v, bounded long task %v", note, long)
	}
}

// leaderFunc is a Leader from a function; calls records each hold asked.
type leaderFunc struct {
	mu    sync.Mutex
	lead  func() (bool, string, error)
	holds []time.Duration
}

func (l *leaderFunc) Lead(_ context.Context, agent string, hold time.Duration) (bool, string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holds = append(l.holds, hold)
	return l.lead()
}

// With a shared database, a slot another daemon leads is recorded skipped naming that daemon and costs no model
// call; a slot whose leader cannot be known runs nothing and is recorded error; a slot this daemon leads runs.
// The hold asked outlasts the sleep to the next slot, so the leader keeps the heartbeat from slot to slot.
func TestSharedBackendLeaderRunsTheSlot(t *testing.T) {
	h := newHarness(t, func(c *config.HeartbeatConfig) { c.IntervalMinutes = 10 })
	h.write("- work\n")
	calls := 0
	h.turns.task = func(tk Turn) (string, error) { calls++; complete(tk, "done"); return "", nil }
	state := "other"
	l := &leaderFunc{lead: func() (bool, string, error) {
		switch state {
		case "other":
			return false, "vps:42:abc", nil
		case "down":
			return false, "", errors.New("connection refused")
		}
		return true, "me", nil
	}}
	h.leader = l
	h.start()
	h.slot(10 * time.Minute)
	state = "down"
	h.slot(10 * time.Minute)
	state = "me"
	h.slot(10 * time.Minute)
	runs := h.runs() // newest first
	if len(runs) < 3 {
		t.Fatalf("runs = %+v", runs)
	}
	if r := runs[len(runs)-1]; r.Status != store.HeartbeatSkipped || !strings.Contains(r.Output, "vps:42:abc") {
		t.Fatalf("the slot another daemon leads: %+v", r)
	}
	if r := runs[len(runs)-2]; r.Status != store.HeartbeatError || !strings.Contains(r.Output, "connection refused") {
		t.Fatalf("the slot with the database down: %+v", r)
	}
	if r := runs[0]; r.Status != store.HeartbeatOK || calls != 1 {
		t.Fatalf("the slot this daemon leads: %+v (model calls %d, want 1)", r, calls)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, hold := range l.holds {
		if hold <= 10*time.Minute {
			t.Fatalf("hold %v does not outlast the 10-minute interval", hold)
		}
	}
}
