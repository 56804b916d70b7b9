package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// SopEngine is the SOP engine for GET /ws/sops/runs; nil when it is off.
func (g *gatewayDaemon) SopEngine() *engine.Engine { return g.d.sops }

func (g *gatewayDaemon) ApprovalsChanged() <-chan struct{} { return g.d.sessions.ApprovalsChanged() }

// Channels is the chat channels' state for GET /api/channels.
func (g *gatewayDaemon) Channels(ctx context.Context) []api.ChannelStatus {
	return g.d.channels.status(ctx)
}

// sopToolsFor gives a turn of agent the sop_* tools over the daemon's engine, acting as agent(<alias>); nil
// while no engine runs. The engine is looked up per turn, so a daemon that starts it after the session
// manager still offers the tools.
func (d *daemon) sopToolsFor(agent string) tools.SOPs {
	if d == nil || d.sops == nil {
		return nil
	}
	return sopTools{e: d.sops, p: engine.Principal{Kind: engine.PrincipalAgent, ID: agent}}
}

// sopTools is tools.SOPs over the engine for one agent.
type sopTools struct {
	e *engine.Engine
	p engine.Principal
}

func (t sopTools) List(context.Context) ([]tools.SOPInfo, error) {
	active := map[string]int{}
	for _, r := range t.e.Runs("") {
		if r.Active {
			active[r.SopName]++
		}
	}
	var out []tools.SOPInfo
	for _, d := range t.e.Definitions() {
		info := tools.SOPInfo{Name: d.Name, Description: d.Description, Priority: string(d.Priority), Steps: len(d.Steps),
			ActiveRuns: active[d.Name]}
		for _, tr := range d.Triggers {
			info.Triggers = append(info.Triggers, describeTrigger(tr))
		}
		out = append(out, info)
	}
	return out, nil
}

// describeTrigger is a trigger as sop_list names it: its type and what it listens to.
func describeTrigger(t sop.Trigger) string {
	for _, v := range []string{t.Topic, t.Path, t.Expression, t.RoutingKey, t.Channel} {
		if v != "" {
			return string(t.Type) + " " + v
		}
	}
	return string(t.Type)
}

func (t sopTools) Execute(ctx context.Context, name, payload string) (api.SopRun, error) {
	if payload = strings.TrimSpace(payload); payload != "" && !json.Valid([]byte(payload)) {
		return api.SopRun{}, fmt.Errorf("payload is not valid JSON")
	}
	res, err := t.e.Execute(ctx, name, payload, t.p, true)
	if err != nil {
		return api.SopRun{}, err
	}
	switch res.Kind {
	case engine.Started, engine.Coalesced:
		return t.Run(ctx, res.RunID)
	}
	return api.SopRun{}, fmt.Errorf("SOP '%s' not started (%s): %s", name, res.Kind, res.Reason)
}

func (t sopTools) Advance(ctx context.Context, runID, status, output string) (api.SopRun, error) {
	if _, err := t.e.Advance(ctx, runID, engine.StepStatus(status), output, t.p); err != nil {
		return api.SopRun{}, err
	}
	return t.Run(ctx, runID)
}

func (t sopTools) Approve(ctx context.Context, runID string) (string, api.SopRun, error) {
	out, _, err := t.e.Decide(ctx, "", runID, engine.Decision{Kind: engine.Approve}, t.p)
	if err != nil {
		return string(out), api.SopRun{}, err
	}
	run, err := t.Run(ctx, runID)
	return string(out), run, err
}

func (t sopTools) Run(_ context.Context, runID string) (api.SopRun, error) {
	r, _, err := t.e.Run(runID)
	if err != nil {
		return api.SopRun{}, err
	}
	return rewire[api.SopRun](r)
}

func (t sopTools) Runs(_ context.Context, sop string) ([]api.SopRunSummary, error) {
	return rewire[[]api.SopRunSummary](t.e.Runs(sop))
}

func (t sopTools) Prompt(_ context.Context, runID string) (string, error) {
	return t.e.StepPrompt(runID)
}

// rewire re-encodes an engine value as its api type (the engine's JSON is upstream's shape plus ours).
func rewire[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out, err
}
