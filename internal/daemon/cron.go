package daemon

import (
	"context"
	"log/slog"
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/controlplane"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// background is the scheduled and supervised work of a daemon: the control plane and the cron scheduler.
type background struct {
	plane *controlplane.Plane
	sched *cron.Scheduler
}

// startBackground opens the control plane (marking the previous process's tasks lost), then starts the
// scheduler (recovery, declarative jobs, catch-up). It runs after the stores and the session manager.
func startBackground(ctx context.Context, layout install.Layout, cfg *config.Manager, st *stores, sessions *session.Manager,
	clk clock.Clock, newID func() string, log *slog.Logger) (*background, error) {
	plane, err := controlplane.Open(ctx, controlplane.Options{Store: st.tasks, Clock: clk, Logger: log, PID: os.Getpid()})
	if err != nil {
		return nil, err
	}
	plane.Start(ctx)
	sched := cron.New(cron.Options{Store: st.cron, Config: cfg.Current, InstallRoot: layout.Root, Clock: clk, Logger: log,
		Agents: agentRunner{sessions}, Tasks: taskAdapter{plane}, NewID: newID})
	cfg.OnChange(func(*config.Config) { sched.ConfigChanged() })
	if err := sched.Start(ctx); err != nil {
		plane.Close()
		return nil, err
	}
	return &background{plane: plane, sched: sched}, nil
}

// stop cancels running jobs and waits for them (until ctx ends), then stops the sweep.
func (b *background) stop(ctx context.Context) {
	b.sched.Close(ctx)
	b.plane.Close()
}

// agentRunner runs agent jobs' turns on the session manager.
type agentRunner struct{ m *session.Manager }

func (a agentRunner) RunUnattended(ctx context.Context, r cron.AgentRun) (string, error) {
	return a.m.RunUnattended(ctx, session.Unattended{Agent: r.Agent, SessionID: r.SessionID, Prompt: r.Prompt,
		AllowedTools: r.AllowedTools, ExcludedTools: r.ExcludedTools})
}

// taskAdapter registers cron runs with the control plane.
type taskAdapter struct{ p *controlplane.Plane }

func (t taskAdapter) Begin(ctx context.Context, task cron.Task) error {
	return t.p.Begin(ctx, task.ID, task.Kind, task.Agent, task.Ref, task.StartedAt)
}

func (t taskAdapter) End(ctx context.Context, id, status, output, errText string) error {
	return t.p.End(ctx, id, status, output, errText)
}
