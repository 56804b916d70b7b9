package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// heartbeatRT is the heartbeat with its history (data/heartbeat/history.db, opened at its first use).
type heartbeatRT struct {
	hb *heartbeat.Heartbeat
	st *store.HeartbeatStore
}

// openHeartbeat starts the heartbeat on the session manager. A [heartbeat] the start disabled (a missing agent)
// is logged once as an error here and shown by status and doctor; the heartbeat stays off and nothing
// restarts it. A config change reschedules it (and seeds HEARTBEAT.md when it is turned on).
func openHeartbeat(ctx context.Context, layout install.Layout, cfg *config.Manager, sessions *session.Manager,
	notify heartbeat.Notifier, clk clock.Clock, newID func() string, log *slog.Logger) *heartbeatRT {
	st := store.OpenHeartbeat(filepath.Join(layout.DataDir, "heartbeat", "history.db"))
	problem := func() string { return heartbeatProblem(cfg.Disabled()) }
	hb := heartbeat.New(heartbeat.Options{Store: st, Config: cfg.Current, InstallRoot: layout.Root,
		Turns: heartbeatTurns{sessions}, Notifier: notify, Clock: clk, NewID: newID, Logger: log, Problem: problem})
	seed := func(c *config.Config) {
		if !c.Heartbeat.Enabled {
			return
		}
		dir, err := workspace.Dir(c, layout.Root, c.Heartbeat.Agent)
		if err == nil {
			err = heartbeat.EnsureFile(dir)
		}
		if err != nil {
			log.Warn("HEARTBEAT.md not seeded", "component", "heartbeat", "err", err)
		}
	}
	if p := problem(); p != "" {
		log.Error("heartbeat disabled by its config; it stays off until [heartbeat] is fixed", "component", "heartbeat", "problem", p)
	}
	seed(cfg.Current())
	cfg.OnChange(func(c *config.Config) {
		seed(c)
		hb.Changed()
	})
	hb.Start(ctx)
	return &heartbeatRT{hb: hb, st: st}
}

// heartbeatProblem names the [heartbeat] problems the config in force disabled; "" when none.
func heartbeatProblem(disabled []config.Problem) string {
	var out []string
	for _, p := range disabled {
		if p.Path == "heartbeat" || strings.HasPrefix(p.Path, "heartbeat.") {
			out = append(out, p.String())
		}
	}
	return strings.Join(out, "; ")
}

// close stops the heartbeat (a task running now is cancelled and recorded as error) and closes its history.
func (h *heartbeatRT) close(log *slog.Logger) {
	h.hb.Close()
	if err := h.st.Close(); err != nil {
		log.Warn("closing heartbeat history", "component", "heartbeat", "err", err)
	}
}

// heartbeatNotifier is own when set, else the chat channels (nil when none runs: alerts are then logged only).
func heartbeatNotifier(own heartbeat.Notifier, ch channel.Notifier) heartbeat.Notifier {
	switch {
	case own != nil:
		return own
	case ch != nil:
		return channelNotifier{ch}
	}
	return nil
}

// channelNotifier sends the heartbeat's messages through the channel core, to "<target>:<to>".
type channelNotifier struct{ n channel.Notifier }

func (c channelNotifier) Send(ctx context.Context, t heartbeat.Target, text string) error {
	return c.n.Notify(ctx, t.Channel+":"+t.To, text)
}

// heartbeatTurns runs heartbeat turns on the session manager, offering a task's turn its heartbeat_complete.
type heartbeatTurns struct{ m *session.Manager }

func (t heartbeatTurns) RunUnattended(ctx context.Context, r heartbeat.Turn) (string, error) {
	u := session.Unattended{Agent: r.Agent, SessionID: r.SessionID, Prompt: r.Prompt}
	if r.Completion != nil {
		u.Extra = r.Completion
	}
	return t.m.RunUnattended(ctx, u)
}
