package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

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
func openHeartbeat(ctx context.Context, layout install.Layout, cfg *config.Manager, sessions *session.Manager, chat store.Chat,
	leader heartbeat.Leader, notify heartbeat.Notifier, clk clock.Clock, newID func() string, log *slog.Logger) *heartbeatRT {
	st := store.OpenHeartbeat(filepath.Join(layout.DataDir, "heartbeat", "history.db"))
	problem := func() string { return heartbeatProblem(cfg.Disabled()) }
	hb := heartbeat.New(heartbeat.Options{Store: st, Config: cfg.Current, InstallRoot: layout.Root,
		Turns: heartbeatTurns{sessions}, Notifier: notify, Clock: clk, NewID: newID, Logger: log, Problem: problem,
		History: heartbeatHistory(chat, channelRegistry(), cfg.Current), Scrub: secretScrubber(cfg.Current),
		Leader: leader})
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

// Bounds of one load_session_context read: the channel sessions considered (newest first) and the newest
// messages of the chosen one (tool messages among them are skipped by heartbeat.SessionContext).
const (
	hbContextSessions = 64
	hbContextMessages = 4 * heartbeat.SessionContextMessages
	hbContextBytes    = 1 << 20
)

// heartbeatHistory reads load_session_context's history from sessions.db: the newest session of the target
// channel with the peer to (the bare type "telegram" is its first alias, as notify picks it). nil with the
// JSONL backend, where channels do not run and no channel session exists.
func heartbeatHistory(chat store.Chat, reg *channel.Registry, current func() *config.Config) heartbeat.History {
	db, ok := chat.(*store.ChatStore)
	if !ok {
		return nil
	}
	return func(ctx context.Context, t heartbeat.Target) ([]heartbeat.HistoryMessage, time.Time, error) {
		id := channel.ParseID(t.Channel)
		if id.Alias == "" {
			for _, inst := range reg.Instances(current(), "") {
				if inst.ID.Type == id.Type {
					id = inst.ID
					break
				}
			}
			if id.Alias == "" {
				return nil, time.Time{}, nil
			}
		}
		cands, err := db.ChannelSessions(ctx, id.String(), t.To, channel.SessionKeyPrefix(id, t.To), hbContextSessions)
		if err != nil {
			return nil, time.Time{}, err
		}
		for _, c := range cands {
			if !channel.PeerSession(id, t.To, c.Meta.Key, c.Room, c.Sender) {
				continue
			}
			msgs, _, _, err := db.Page(ctx, c.Meta.Key, hbContextMessages, -1, hbContextBytes)
			if err != nil {
				return nil, time.Time{}, err
			}
			out := make([]heartbeat.HistoryMessage, 0, len(msgs))
			for _, m := range msgs {
				out = append(out, heartbeat.HistoryMessage{Role: m.Role, Content: m.Content})
			}
			return out, c.Meta.LastActivity, nil
		}
		return nil, time.Time{}, nil
	}
}
