// Package engine runs SOPs: admission of trigger events, the run lifecycle, every step executed through the
// daemon's unattended turn path, approval gates bound to the exact step shown, and the durable record in
// runstore from which runs are restored after kill -9.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// StepRequest is one step turn handed to the Turner. Prompt is the whole step context; the trigger payload
// is inside it as framed data, never as instructions or command text.
type StepRequest struct {
	RunID, SopName string
	Step, Attempt  int
	Agent          string // the effective agent (step override, else the SOP's); "" = default agent
	SessionID      string // unique per run, step and attempt
	Prompt         string
	AllowedTools   []string
	ExcludedTools  []string
}

// StepOutput is what a step turn produced.
type StepOutput struct {
	Output    string
	Agent     string
	ToolCalls []ToolCall
}

// Turner executes one step as an unattended agent turn (the daemon implements it over
// session.Manager.RunUnattended): the agent's tools, risk profile, budgets, costs and logs apply, and a call
// the profile would ask about is refused, not approved. An error fails the step with the error's text.
type Turner interface {
	RunStep(ctx context.Context, req StepRequest) (StepOutput, error)
}

// Policy is one [sop.approval.policies.<p>] entry.
type Policy struct {
	RequiredGroup string
	Quorum        int
}

// Settings are the [sop] keys the engine acts on (§2), with upstream's defaults applied by Defaults.
type Settings struct {
	DefaultExecutionMode  string
	MaxConcurrentTotal    int
	ApprovalTimeout       time.Duration // 0 disables
	ApprovalTimeoutAction string        // escalate | cancel | auto_approve; anything else cancels (fail closed)
	ApprovalMode          string        // both | out_of_band_required | agent_tool
	MaxFinishedRuns       int
	MaxActiveRuns         int // runs held at once (running, parked, pending), whatever the SOPs' caps; 0 = DefaultMaxActiveRuns
	MaxStepVisits         int
	MaxRunResults         int // step results one run records in all (loops included); 0 = DefaultMaxRunResults
	MaxStepRetries        int
	StepTimeout           time.Duration // per step turn; 0 = none
	PayloadMaxBytes       int           // 0 = no cap
	InputGuard            string        // untrusted_input_guard: warn | block | sanitize
	GuardSensitivity      float64       // untrusted_guard_sensitivity, 0..1
	SchemaEnforce         bool          // step_schema_enforce: step input and output checked against their schemas
	ScopeEnforce          bool          // step_scope_enforce: a step's scope limits its turn's tools
	MandatoryTools        []string      // step_mandatory_tools: kept under scope enforcement
	Groups                map[string][]string
	Policies              map[string]Policy
}

// DefaultMaxActiveRuns bounds the runs the engine holds at once. A park holds no slot, so max_concurrent does
// not bound parked runs and max_pending_approvals defaults to no cap: without this a peer delivering triggers
// (webhook, MQTT, files) with distinct keys could make the daemon hold runs, and runs.db rows, without end.
const DefaultMaxActiveRuns = 1024

// DefaultMaxRunResults bounds the step results of one run: max_step_visits bounds each step, so a loop
// through many steps could record visits × steps results (each up to 64 KiB), the run rewritten at each.
const DefaultMaxRunResults = 1024

// Defaults returns upstream's defaults.
func Defaults() Settings {
	return Settings{DefaultExecutionMode: "supervised", MaxConcurrentTotal: 4, ApprovalTimeout: 300 * time.Second,
		ApprovalTimeoutAction: "escalate", ApprovalMode: "both", MaxFinishedRuns: 100, MaxStepVisits: 256,
		MaxStepRetries: 2, StepTimeout: 10 * time.Minute, PayloadMaxBytes: 8192, InputGuard: "warn", GuardSensitivity: 0.7,
		SchemaEnforce: true}
}

// Config builds an Engine.
type Config struct {
	Store       runstore.Store // required; runstore.NewMemory() when nothing durable is available
	StoreStatus StoreStatus
	Turns       Turner // nil: execute steps fail closed ("requires an external driver")
	Settings    Settings
	Clock       clock.Clock
	Logger      *slog.Logger
}

// Engine is the SOP runtime. Methods are safe for concurrent use.
type Engine struct {
	store  runstore.Store
	status StoreStatus
	turns  Turner
	set    Settings
	clk    clock.Clock
	log    *slog.Logger

	base   context.Context // the drivers' lifetime; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // drivers

	counter atomic.Uint64

	mu            sync.Mutex // guards the fields below
	defs          map[string]*def
	active        map[string]*runState
	finished      []*Run          // newest last, at most MaxFinishedRuns
	finishedDefs  map[string]*def // run id -> the definition a finished run ran (its overlay's steps)
	lastCompleted map[string]time.Time
	keys          map[string]string // dedup key -> run id
	keyOrder      []string
	subs          map[*Subscription]struct{}
	closed        bool
	restored      int
	interrupted   int
}

// runState is an active run and what the engine holds for it.
type runState struct {
	run      Run
	def      *def   // the definition the run started with
	stored   uint64 // store revision last written
	driving  bool
	stepStop context.CancelFunc // cancels the in-flight step turn
	done     chan struct{}      // closed when the current driver returns
	ending   *ending            // a terminal state decided but not yet committed (the store failed)
}

// ending is a run's end waiting to be committed: retried before anything else is done with the run, so a
// store failure never lets the run execute a step again.
type ending struct {
	status RunStatus
	reason string
	evs    []runstore.Event
}

// New builds an engine over cfg. base bounds every run driver: cancel it (or call Close) to stop them. Call
// Restore before admitting anything.
func New(base context.Context, cfg Config) *Engine {
	s := normalize(cfg.Settings)
	lg := cfg.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	e := &Engine{store: cfg.Store, status: cfg.StoreStatus, turns: cfg.Turns, set: s, clk: clock.OrReal(cfg.Clock),
		log:  lg.With("component", "sop"),
		defs: map[string]*def{}, active: map[string]*runState{}, lastCompleted: map[string]time.Time{}, finishedDefs: map[string]*def{},
		keys: map[string]string{}, subs: map[*Subscription]struct{}{}}
	if e.status.Backend == "" {
		e.status.Backend = cfg.Store.Backend()
		e.status.Durable = cfg.Store.Backend() == "sqlite"
	}
	e.base, e.cancel = context.WithCancel(base)
	return e
}

// Shutdown is the graceful stop: nothing new is admitted or started, the step turns in flight may finish
// until ctx ends (their outcomes committed; their runs resume at the next Restore from the step after), then
// Close cuts what is left.
func (e *Engine) Shutdown(ctx context.Context) {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	e.Close()
}

// Close stops admitting, cancels the in-flight step turns and waits for every driver. A step cut off this
// way stays in flight in the store and is marked interrupted at the next Restore, exactly as after a crash.
// The store is the caller's to close afterwards.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
	e.mu.Lock()
	for s := range e.subs {
		s.close()
	}
	e.mu.Unlock()
}

// SetSettings replaces the [sop] settings (a config reload); runs in flight see the new values from their next
// decision on.
func (e *Engine) SetSettings(s Settings) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.set = normalize(s)
}

func normalize(s Settings) Settings {
	d := Defaults()
	if s.DefaultExecutionMode == "" {
		s.DefaultExecutionMode = d.DefaultExecutionMode
	}
	if s.MaxStepVisits <= 0 {
		s.MaxStepVisits = d.MaxStepVisits
	}
	if s.MaxActiveRuns <= 0 {
		s.MaxActiveRuns = DefaultMaxActiveRuns
	}
	if s.MaxRunResults <= 0 {
		s.MaxRunResults = DefaultMaxRunResults
	}
	if s.ApprovalMode == "" {
		s.ApprovalMode = d.ApprovalMode
	}
	return s
}

// Reload replaces the loaded definitions. A running run keeps the definition it started with.
func (e *Engine) Reload(defs []sop.Sop) {
	m := make(map[string]*def, len(defs))
	for _, d := range defs {
		m[d.Name] = newDef(d)
	}
	e.mu.Lock()
	e.defs = m
	e.mu.Unlock()
}

// Definitions returns the loaded definitions sorted by name.
func (e *Engine) Definitions() []sop.Sop {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]sop.Sop, 0, len(e.defs))
	for _, d := range e.defs {
		out = append(out, d.Sop)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Status reports the store mode and run counts.
func (e *Engine) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := Status{Store: e.status, Loaded: len(e.defs), ActiveRuns: len(e.active), FinishedRuns: len(e.finished),
		Driver: e.turns != nil, RestoredRuns: e.restored, Interrupted: e.interrupted}
	for _, rs := range e.active {
		if rs.run.Status.Parked() {
			st.WaitingRuns++
		}
	}
	return st
}

// Runs returns the active runs and the retained finished runs of sopName ("" = all), newest started_at
// first.
func (e *Engine) Runs(sopName string) []RunSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []RunSummary
	for _, rs := range e.active {
		if sopName == "" || rs.run.SopName == sopName {
			out = append(out, rs.run.Summary(true))
		}
	}
	for _, r := range e.finished {
		if sopName == "" || r.SopName == sopName {
			out = append(out, r.Summary(false))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].StartedAt != out[j].StartedAt {
			return out[i].StartedAt > out[j].StartedAt
		}
		return out[i].RunID > out[j].RunID
	})
	return out
}

// Run returns a copy of one run, active or retained, and whether it is active. ErrNotFound when neither.
func (e *Engine) Run(id string) (Run, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rs, ok := e.active[id]; ok {
		return cloneRun(&rs.run), true, nil
	}
	for _, r := range e.finished {
		if r.RunID == id {
			return cloneRun(r), false, nil
		}
	}
	return Run{}, false, fmt.Errorf("%w: run '%s' not found", ErrNotFound, id)
}

// Ledger returns the run's append-only events from the store.
func (e *Engine) Ledger(ctx context.Context, id string) ([]runstore.Event, error) {
	return e.store.Events(ctx, id)
}

// Overlay draws run id over its SOP's steps. name, when non-empty, must be the run's SOP (ErrWrongSOP).
func (e *Engine) Overlay(name, id string) (Overlay, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.overlayLocked(name, id)
}

func (e *Engine) overlayLocked(name, id string) (Overlay, error) {
	var r *Run
	var d *def
	active := false
	if rs, ok := e.active[id]; ok {
		r, d, active = &rs.run, rs.def, true
	} else {
		for _, f := range e.finished {
			if f.RunID == id {
				r = f
			}
		}
		if r != nil {
			if d = e.finishedDefs[id]; d == nil {
				d = e.defs[r.SopName]
			}
		}
	}
	if r == nil {
		return Overlay{}, fmt.Errorf("%w: run '%s' not found", ErrNotFound, id)
	}
	if name != "" && r.SopName != name {
		return Overlay{}, fmt.Errorf("%w: run '%s' belongs to SOP '%s', not '%s'", ErrWrongSOP, id, r.SopName, name)
	}
	ov := Overlay{RunID: r.RunID, SopName: r.SopName, Status: r.Status, CurrentStep: r.CurrentStep,
		TotalSteps: r.TotalSteps, Waiting: r.Status == StatusWaitingApproval, Paused: r.Status == StatusPausedCheckpoint,
		FailureReason: r.FailureReason, Nodes: []OverlayNode{}}
	if r.Gate != nil {
		g := *r.Gate
		ov.Gate = &g
	}
	last := map[int]*StepResult{}
	for i := range r.StepResults {
		last[r.StepResults[i].StepNumber] = &r.StepResults[i]
	}
	var numbers []int
	if d != nil {
		for _, s := range d.Steps {
			numbers = append(numbers, int(s.Number))
		}
	} else {
		for n := 1; n <= r.TotalSteps; n++ {
			numbers = append(numbers, n)
		}
	}
	for _, n := range numbers {
		node := OverlayNode{Step: n, State: NodePending}
		if res := last[n]; res != nil {
			node.State = NodeState(res.Status)
			node.ToolCalls = res.ToolCalls
		}
		if active && n == r.CurrentStep {
			node.State = NodeActive
		}
		ov.Nodes = append(ov.Nodes, node)
	}
	return ov, nil
}

func cloneRun(r *Run) Run {
	c := *r
	c.StepResults = append([]StepResult(nil), r.StepResults...)
	if r.Gate != nil {
		g := *r.Gate
		g.Votes = append([]string(nil), r.Gate.Votes...)
		c.Gate = &g
	}
	if r.InFlight != nil {
		f := *r.InFlight
		c.InFlight = &f
	}
	return c
}

// Subscription is a bounded live feed of run summaries: one per persisted transition. A subscriber that
// falls behind loses summaries, never blocks the engine; Lagged counts what it lost.
type Subscription struct {
	C      <-chan RunSummary
	c      chan RunSummary
	lagged atomic.Uint64
	e      *Engine
	once   sync.Once
}

// Subscribe opens a feed with room for buf summaries (at least 1).
func (e *Engine) Subscribe(buf int) *Subscription {
	if buf < 1 {
		buf = 1
	}
	s := &Subscription{c: make(chan RunSummary, buf), e: e}
	s.C = s.c
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		s.close()
		return s
	}
	e.subs[s] = struct{}{}
	return s
}

// Lagged returns how many summaries this subscriber has missed, and resets the count.
func (s *Subscription) Lagged() uint64 { return s.lagged.Swap(0) }

// Close ends the feed; C is closed.
func (s *Subscription) Close() {
	s.e.mu.Lock()
	delete(s.e.subs, s)
	s.e.mu.Unlock()
	s.close()
}

func (s *Subscription) close() { s.once.Do(func() { close(s.c) }) }

// publishLocked sends sum to every subscriber without blocking. e.mu is held.
func (e *Engine) publishLocked(sum RunSummary) {
	for s := range e.subs {
		select {
		case s.c <- sum:
		default:
			s.lagged.Add(1)
		}
	}
}

func (e *Engine) now() time.Time { return e.clk.Now().UTC() }

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
