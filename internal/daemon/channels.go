package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/email"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/irc"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/mqtt"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// channelRuntime is the chat channels' delivery core, run for the daemon's life and rewired on every config
// change (/admin/reload included). It is nil-safe: a daemon on the JSONL session backend runs no channel.
type channelRuntime struct {
	core   *channel.Core
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// channelRegistry is every platform this build speaks.
func channelRegistry() *channel.Registry {
	r := &channel.Registry{}
	r.Register(telegram.Type())
	r.Register(mqtt.Type())
	r.Register(irc.Type())
	r.Register(email.Type())
	r.Register(matrix.Type())
	r.Register(slack.Type())
	r.Register(discord.Type())
	return r
}

// openChannels starts the configured channels on sessions.db. With the JSONL backend there is no durable
// record to deliver exactly once from, so channels do not start (a warning says so when some are configured).
func openChannels(ctx context.Context, layout install.Layout, cfg *config.Manager, chat store.Chat, sessions *session.Manager,
	clk clock.Clock, log *slog.Logger) *channelRuntime {
	log = log.With("component", "channel")
	reg := channelRegistry()
	db, ok := chat.(*store.ChatStore)
	if !ok {
		if n := len(reg.Instances(cfg.Current(), "")); n > 0 {
			log.Warn("chat channels need channels.session_backend = \"sqlite\": they are not started", "configured", n)
		}
		return nil
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rt := &channelRuntime{cancel: cancel}
	rt.core = channel.New(channel.Options{Store: db, Turner: channelTurner{sessions}, Registry: reg, Clock: clk, Logger: log,
		Deps:         channel.Deps{HTTP: &http.Client{}, DataDir: filepath.Join(layout.DataDir, "channels")},
		DefaultAgent: func(c *config.Config) string { a, _ := agent.DefaultAgent(c); return a }})
	rt.wg.Add(1)
	go func() { defer rt.wg.Done(); rt.core.Run(base, cfg.Current()) }()
	cfg.OnChange(rt.core.Reload)
	return rt
}

// close stops every channel: no event is acknowledged any more, running turns are cancelled (their events are
// answered with a notice at the next start). Called first in the drain, before the sessions shut down.
func (rt *channelRuntime) close() {
	if rt == nil {
		return
	}
	rt.once.Do(func() {
		rt.cancel()
		rt.wg.Wait()
	})
}

// status is each channel's state for health, status and GET /api/channels (nil: none runs).
func (rt *channelRuntime) status(ctx context.Context) []api.ChannelStatus {
	if rt == nil {
		return nil
	}
	var out []api.ChannelStatus
	for _, s := range rt.core.Status(ctx) {
		out = append(out, api.ChannelStatus{ID: s.ID, Type: s.Type, Alias: s.Alias, Agent: s.Agent, State: s.State,
			Healthy: s.Healthy(), LastEventAt: s.LastEventAt, LastProgressAt: s.LastProgressAt, LastError: s.LastError,
			Restarts: s.Restarts, Ignored: s.Ignored, Counts: s.Counts, Warnings: s.Warnings})
	}
	return out
}

// states is status.channels: each channel's id and state (nil: none).
func (rt *channelRuntime) states() []api.ChannelBrief {
	if rt == nil {
		return nil
	}
	var out []api.ChannelBrief
	for _, s := range rt.core.States() {
		out = append(out, api.ChannelBrief{ID: s.ID, State: s.State})
	}
	return out
}

// notifier is the channels as a channel.Notifier (nil when none can run).
func (rt *channelRuntime) notifier() channel.Notifier {
	if rt == nil {
		return nil
	}
	return rt.core
}

// channelTurner runs a channel's turns on the session manager, its approvals put to the chat.
type channelTurner struct{ sessions *session.Manager }

func (t channelTurner) Turn(ctx context.Context, r channel.TurnRequest) (string, error) {
	return t.sessions.RunChannel(ctx, session.ChannelTurn{Agent: r.Agent, SessionID: r.SessionKey, Prompt: r.Prompt,
		ExcludedTools: r.ExcludedTools,
		Approve: func(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error) {
			d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: req.RequestID, ToolName: req.ToolName, Summary: req.Summary})
			if errors.Is(err, channel.ErrApprovalTimeout) {
				return agent.ApprovalDecision{}, agent.ErrApprovalTimeout
			}
			if err != nil {
				return agent.ApprovalDecision{}, err
			}
			return agent.ApprovalDecision{Decision: d}, nil
		}})
}
