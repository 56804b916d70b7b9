package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// Turns runs the turns of delegated tasks: the daemon's session manager.
type Turns interface {
	// RunUnattended runs one unattended turn of t.Agent in a session of its own and returns the reply.
	RunUnattended(ctx context.Context, t DelegateTurn) (string, error)
}

// DelegateTurn is one delegated task's turn.
type DelegateTurn struct {
	Agent, SessionID, Prompt string
	ExcludedTools            []string // tools the turn is not offered
	AllowedTools             []string // when non-empty, the only tools the turn is offered (a restricted caller's)
}

// DelegateOptions configure Delegations. Plane and Config are required.
type DelegateOptions struct {
	Plane       *Plane
	Config      func() *config.Config
	InstallRoot string // agents' default workspaces are under it
	Clock       clock.Clock
	Logger      *slog.Logger
}

// Delegations runs the delegate tool's work: a task handed to another agent runs as one unattended turn of
// that agent (its model, tools and risk profile; it may not delegate further). A background task is a
// control-plane task (kind "delegate") whose result file, <caller workspace>/delegate_results/<task id>.json,
// says running until the turn ends; a daemon that dies first leaves it running, and reads then show the
// control plane's lost. Its methods are safe for concurrent use; Start is called once, before any turn runs,
// and Stop waits for the background tasks.
type Delegations struct {
	plane *Plane
	cfg   func() *config.Config
	root  string
	clk   clock.Clock
	log   *slog.Logger

	wg     sync.WaitGroup // every background task
	mu     sync.Mutex     // guards the fields below
	turns  Turns
	runCtx context.Context // cancelled by Stop; background turns derive from it
	cancel context.CancelFunc
	closed bool
}

// NewDelegations returns the delegate tool's domain, not started: until Start, delegations fail.
func NewDelegations(o DelegateOptions) *Delegations {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Delegations{plane: o.Plane, cfg: o.Config, root: o.InstallRoot, clk: clock.OrReal(o.Clock), log: o.Logger}
}

// delegateExcluded are the tools a delegated turn is not offered: no delegation chains.
var delegateExcluded = []string{tools.NameDelegate}

// Start lets tasks run their turns on turns; ctx's values (not its end) carry into background tasks.
func (d *Delegations) Start(ctx context.Context, turns Turns) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.turns = turns
	d.runCtx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
}

// Stop cancels the background tasks (each is recorded as cancelled) and waits for them until ctx ends; no
// task starts after it.
func (d *Delegations) Stop(ctx context.Context) {
	d.mu.Lock()
	d.closed = true
	cancel := d.cancel
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		d.log.Warn("delegated tasks still finishing at shutdown", "component", "delegate")
	}
}

// ForAgent is the delegate tool's view for caller's turns, or nil when its risk profile does not allow
// delegation (the tool is then not offered).
func (d *Delegations) ForAgent(caller string) tools.Delegator {
	if !d.cfg().DelegationAllowed(caller) {
		return nil
	}
	return delegator{d: d, caller: caller}
}

// workspace is the agent's workspace directory, as agent.Resolve computes it.
func (d *Delegations) workspace(cfg *config.Config, alias string) string {
	ws := cfg.Agents[alias].Workspace.Path
	if ws == "" {
		ws = filepath.Join(d.root, "agents", alias, "workspace")
	}
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	return ws
}

func wireResult(r DelegateResult) tools.DelegateResult {
	return tools.DelegateResult{TaskID: r.TaskID, Agent: r.Agent, Status: r.Status, Output: r.Output, Error: r.Error,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
}

// delegator is one calling agent's Delegator.
type delegator struct {
	d       *Delegations
	caller  string
	allowed []string // when non-empty, the only tools the delegated turns are offered
}

// Narrowed is g whose delegated turns are offered only allowed (a restricted principal's tools).
func (g delegator) Narrowed(allowed []string) tools.Delegator {
	g.allowed = slices.Clone(allowed)
	return g
}

func (g delegator) Targets() []string { return g.d.cfg().DelegateTargets(g.caller) }

func (g delegator) Run(ctx context.Context, agent, prompt string) (string, string, error) {
	g.d.mu.Lock()
	turns := g.d.turns
	g.d.mu.Unlock()
	if turns == nil {
		return "", "", errors.New("the daemon is not running turns yet")
	}
	reply, err := turns.RunUnattended(ctx, DelegateTurn{Agent: agent, SessionID: "delegate-" + NewUUID(),
		Prompt: prompt, ExcludedTools: delegateExcluded, AllowedTools: g.allowed})
	return modelOf(g.d.cfg(), agent), reply, err
}

// modelOf names the provider family and model an agent runs on, as upstream's delegate output shows it.
func modelOf(cfg *config.Config, agent string) string {
	ref := cfg.Agents[agent].ModelProvider
	family, alias, _ := strings.Cut(ref, ".")
	if m := cfg.Providers.Models[family][alias].Model; m != "" {
		return family + "/" + m
	}
	return ref
}

func (g delegator) Start(ctx context.Context, agent, prompt string) (string, error) {
	d := g.d
	d.mu.Lock()
	if d.closed || d.turns == nil {
		d.mu.Unlock()
		return "", errors.New("the daemon is stopping")
	}
	turns, runCtx := d.turns, d.runCtx
	d.wg.Add(1)
	d.mu.Unlock()
	started := false
	defer func() {
		if !started {
			d.wg.Done()
		}
	}()

	cfg := d.cfg()
	id, ws, now := NewUUID(), d.workspace(cfg, g.caller), d.clk.Now()
	if err := d.plane.Begin(ctx, id, "delegate", agent, "delegate:"+g.caller, now); err != nil {
		return "", err
	}
	res := DelegateResult{TaskID: id, Agent: agent, Status: ResultRunning, StartedAt: stamp(now)}
	if err := WriteResult(ws, res); err != nil {
		_ = d.plane.End(context.WithoutCancel(ctx), id, "failed", "", err.Error())
		return "", err
	}
	started = true
	go func() {
		defer d.wg.Done()
		reply, err := turns.RunUnattended(runCtx, DelegateTurn{Agent: agent, SessionID: "delegate-" + id,
			Prompt: prompt, ExcludedTools: delegateExcluded, AllowedTools: g.allowed})
		status, errText := ResultCompleted, ""
		switch {
		case err != nil && runCtx.Err() != nil:
			status, errText = ResultCancelled, "cancelled: the daemon stopped while the task was running"
		case err != nil:
			status, errText = ResultFailed, fmt.Sprintf("Agent '%s' failed: %v", agent, err)
		}
		end := stamp(d.clk.Now())
		res.Status, res.FinishedAt = status, &end
		if status == ResultCompleted {
			res.Output = &reply
		} else {
			res.Error = &errText
		}
		durable := context.WithoutCancel(runCtx)
		if err := WriteResult(ws, res); err != nil {
			d.log.Warn("delegate result not written", "component", "delegate", "task", id, "err", err)
		}
		if err := d.plane.End(durable, id, status, reply, errText); err != nil {
			d.log.Warn("delegate task end not recorded", "component", "delegate", "task", id, "err", err)
		}
	}()
	return id, nil
}

func (g delegator) Result(ctx context.Context, taskID string) (tools.DelegateResult, error) {
	r, err := g.d.plane.ReadResult(ctx, g.d.workspace(g.d.cfg(), g.caller), taskID)
	if err != nil {
		return tools.DelegateResult{}, err
	}
	return wireResult(r), nil
}

func (g delegator) Results(ctx context.Context) ([]tools.DelegateResult, error) {
	ws := g.d.workspace(g.d.cfg(), g.caller)
	entries, err := os.ReadDir(filepath.Join(ws, "delegate_results"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []tools.DelegateResult
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		r, err := g.d.plane.ReadResult(ctx, ws, id)
		if err != nil {
			continue // not a task's file (a bad name, a damaged file): not a result
		}
		out = append(out, wireResult(r))
	}
	slices.SortStableFunc(out, func(a, b tools.DelegateResult) int { return strings.Compare(a.StartedAt, b.StartedAt) })
	return out, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
