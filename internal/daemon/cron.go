package daemon

import (
	"context"
	"log/slog"
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/controlplane"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// background is the scheduled and supervised work of a daemon: the control plane, the cron scheduler and the
// delegate tool's background tasks.
type background struct {
	plane  *controlplane.Plane
	sched  *cron.Scheduler
	runner *agentRunner
	deleg  *controlplane.Delegations
}

// openBackground opens the control plane (marking the previous process's tasks lost) and makes the scheduler,
// not started: the session manager is made next (its turns reach the scheduler through the cron tools), then
// start runs the scheduler on it.
func openBackground(ctx context.Context, layout install.Layout, cfg *config.Manager, st *stores, clk clock.Clock,
	newID func() string, log *slog.Logger) (*background, error) {
	plane, err := controlplane.Open(ctx, controlplane.Options{Store: st.tasks, Clock: clk, Logger: log, PID: os.Getpid()})
	if err != nil {
		return nil, err
	}
	runner := &agentRunner{}
	sched := cron.New(cron.Options{Store: st.cron, Config: cfg.Current, InstallRoot: layout.Root, Clock: clk, Logger: log,
		Agents: runner, Tasks: taskAdapter{plane}, NewID: newID})
	deleg := controlplane.NewDelegations(controlplane.DelegateOptions{Plane: plane, Config: cfg.Current, InstallRoot: layout.Root,
		Clock: clk, Logger: log})
	return &background{plane: plane, sched: sched, runner: runner, deleg: deleg}, nil
}

// start runs the control plane's sweep, lets delegated tasks run, and starts the scheduler (recovery, declarative jobs, catch-up), whose agent
// jobs run on sessions. It is called once, before any turn can run.
func (b *background) start(ctx context.Context, cfg *config.Manager, sessions *session.Manager) error {
	b.runner.m = sessions
	b.deleg.Start(ctx, delegateTurns{sessions})
	b.plane.Start(ctx)
	cfg.OnChange(func(*config.Config) { b.sched.ConfigChanged() })
	if err := b.sched.Start(ctx); err != nil {
		b.plane.Close()
		return err
	}
	return nil
}

// tools returns the cron tools' view of the scheduler for one agent's turns.
func (b *background) tools(agent string) tools.Cron {
	return cronTools{s: b.sched, agent: agent}
}

// stop cancels running jobs and delegated tasks and waits for them (until ctx ends), then stops the sweep.
func (b *background) stop(ctx context.Context) {
	b.deleg.Stop(ctx)
	b.sched.Close(ctx)
	b.plane.Close()
}

// agentRunner runs agent jobs' turns on the session manager; m is set by background.start, before the
// scheduler starts.
type agentRunner struct{ m *session.Manager }

func (a *agentRunner) RunUnattended(ctx context.Context, r cron.AgentRun) (string, error) {
	return a.m.RunUnattended(ctx, session.Unattended{Agent: r.Agent, SessionID: r.SessionID, Prompt: r.Prompt,
		AllowedTools: r.AllowedTools, ExcludedTools: r.ExcludedTools})
}

// delegateTurns runs delegated tasks' turns on the session manager.
type delegateTurns struct{ m *session.Manager }

func (t delegateTurns) RunUnattended(ctx context.Context, r controlplane.DelegateTurn) (string, error) {
	return t.m.RunUnattended(ctx, session.Unattended{Agent: r.Agent, SessionID: r.SessionID, Prompt: r.Prompt,
		ExcludedTools: r.ExcludedTools, AllowedTools: r.AllowedTools})
}

// taskAdapter registers cron runs with the control plane.
type taskAdapter struct{ p *controlplane.Plane }

func (t taskAdapter) Begin(ctx context.Context, task cron.Task) error {
	return t.p.Begin(ctx, task.ID, task.Kind, task.Agent, task.Ref, task.StartedAt)
}

func (t taskAdapter) End(ctx context.Context, id, status, output, errText string) error {
	return t.p.End(ctx, id, status, output, errText)
}

// cronTools is the scheduler as one agent's cron tools see it: what it adds is the agent's, and only the
// agent's jobs are found.
type cronTools struct {
	s     *cron.Scheduler
	agent string
}

func (c cronTools) Enabled() bool { return c.s.Settings().Enabled }

func (c cronTools) Add(ctx context.Context, r tools.CronAdd) (api.CronJob, error) {
	return c.s.Add(ctx, cron.AddRequest{Agent: c.agent, Schedule: r.Schedule, Name: r.Name, JobType: r.JobType,
		Command: r.Command, Prompt: r.Prompt, SessionTarget: r.SessionTarget, Model: r.Model, AllowedTools: r.AllowedTools,
		DeleteAfterRun: r.DeleteAfterRun, UsesMemory: r.UsesMemory, Delivery: r.Delivery})
}

func (c cronTools) List(ctx context.Context) ([]api.CronJob, error) { return c.s.Owned(ctx, c.agent) }

func (c cronTools) Resolve(ctx context.Context, idOrName string) (string, error) {
	return c.s.ResolveOwned(ctx, idOrName, c.agent)
}

func (c cronTools) Update(ctx context.Context, id string, p tools.CronPatch) (api.CronJob, error) {
	return c.s.Patch(ctx, id, cron.Patch{Name: p.Name, Schedule: p.Schedule, Command: p.Command, Prompt: p.Prompt,
		Enabled: p.Enabled, Model: p.Model, SessionTarget: p.SessionTarget, DeleteAfterRun: p.DeleteAfterRun,
		AllowedTools: p.AllowedTools, UsesMemory: p.UsesMemory, Delivery: p.Delivery})
}

func (c cronTools) Remove(ctx context.Context, id string) error { return c.s.Delete(ctx, id) }

func (c cronTools) Run(ctx context.Context, id string) (api.CronTriggerResult, error) {
	return c.s.Trigger(ctx, id)
}

func (c cronTools) Runs(ctx context.Context, id string, limit int) ([]api.CronRun, error) {
	return c.s.Runs(ctx, id, limit)
}
