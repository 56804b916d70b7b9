package channel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Store is the durable record the core keeps in sessions.db (store.ChatStore implements it).
type Store interface {
	RecordChannelEvent(ctx context.Context, ev store.ChanEvent, now time.Time) (store.ChanEvent, bool, error)
	SetChannelEventState(ctx context.Context, id int64, state, sessionKey, errText string) error
	AnswerChannelEvent(ctx context.Context, id int64, outs []store.ChanOut, now time.Time) error
	PendingChannelEvents(ctx context.Context, channelID string) ([]store.ChanEvent, error)
	ChannelOutbox(ctx context.Context, channelID, state string, limit int) ([]store.ChanOut, error)
	SetChannelOut(ctx context.Context, id int64, from, to, platformID, errText string, bump bool, now time.Time) (bool, error)
	ChannelCounts(ctx context.Context, channelID string) (map[string]int, error)
	StampChannelSession(ctx context.Context, key, channelID, roomID, senderID string, now time.Time) error
}

// TurnRequest is one agent turn a channel message starts.
type TurnRequest struct {
	Channel       ID
	Agent         string
	SessionKey    string // the session the turn runs in (SessionKey)
	Sender        string // the platform user whose message it is
	Prompt        string
	ExcludedTools []string
	// Approve asks the chat about a tool call; it returns an api decision (allow_once, reject_once...) or an
	// error wrapping ErrApprovalTimeout or ctx's error.
	Approve func(ctx context.Context, a ApprovalAsk) (string, error)
}

// ApprovalAsk is a tool call a turn wants approved.
type ApprovalAsk struct {
	RequestID, ToolName, Summary string
}

// ErrApprovalTimeout: nobody answered an approval prompt in time (the call is denied).
var ErrApprovalTimeout = errors.New("channel: approval timed out")

// Turner runs agent turns (the session layer, through the daemon).
type Turner interface {
	// Turn runs r to its end and returns the answer. It must honour ctx.
	Turn(ctx context.Context, r TurnRequest) (string, error)
}

// Options configures a Core. Store, Turner and Registry are required.
type Options struct {
	Store    Store
	Turner   Turner
	Registry *Registry
	Deps     Deps
	Logger   *slog.Logger
	Clock    clock.Clock
	// DefaultAgent is the agent owning every channel when no agent lists any (upstream's legacy fallback).
	DefaultAgent func(cfg *config.Config) string
	// Rand returns a number in [0,1) for backoff jitter (nil: math/rand/v2).
	Rand func() float64
	// MaxAttempts bounds the sends of one message (0: 8); past it the message is failed.
	MaxAttempts int
	// StaleAfter is how long without progress a running channel is reported stale (0: 3 minutes).
	StaleAfter time.Duration
}

// Core runs every configured channel: it supervises the adapters, records and routes their events, runs the
// turns and delivers the answers. Run owns its goroutines; Reload and Status may be called from any goroutine.
type Core struct {
	o       Options
	reloads chan *config.Config

	mu      sync.Mutex         // guards runners
	runners map[string]*runner // by ID.String()
}

// New builds a Core; nothing runs until Run.
func New(o Options) *Core {
	o.Clock = clock.OrReal(o.Clock)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 3 * time.Minute
	}
	if o.Deps.Clock == nil {
		o.Deps.Clock = o.Clock
	}
	if o.Deps.Logger == nil {
		o.Deps.Logger = o.Logger
	}
	return &Core{o: o, reloads: make(chan *config.Config, 1), runners: map[string]*runner{}}
}

// Run starts the channels of cfg and keeps them as the config changes (Reload), until ctx is done; then it
// stops every channel (no new events, running turns cancelled) and returns once all are stopped.
func (c *Core) Run(ctx context.Context, cfg *config.Config) {
	c.apply(ctx, cfg)
	for {
		select {
		case <-ctx.Done():
			c.mu.Lock()
			rs := make([]*runner, 0, len(c.runners))
			for _, r := range c.runners {
				rs = append(rs, r)
			}
			c.runners = map[string]*runner{}
			c.mu.Unlock()
			for _, r := range rs {
				r.stop(false)
			}
			return
		case cfg := <-c.reloads:
			c.apply(ctx, cfg)
		}
	}
}

// Reload hands Run a new config: channels added start, removed ones stop after their running turns end, and
// changed ones restart. It does not wait. Events are durable throughout: one that arrives at a stopping
// channel is not acknowledged, and the platform delivers it again to the new one.
func (c *Core) Reload(cfg *config.Config) {
	for {
		select {
		case c.reloads <- cfg:
			return
		default:
			select { // replace a pending older config
			case <-c.reloads:
			default:
			}
		}
	}
}

func (c *Core) defaultAgent(cfg *config.Config) string {
	if c.o.DefaultAgent != nil {
		return c.o.DefaultAgent(cfg)
	}
	return ""
}

func (c *Core) apply(ctx context.Context, cfg *config.Config) {
	want := map[string]Instance{}
	for _, inst := range c.o.Registry.Instances(cfg, c.defaultAgent(cfg)) {
		want[inst.ID.String()] = inst
	}
	g := GlobalsOf(cfg)
	if cfg.Reliability.ChannelInitialBackoffSecs > 0 {
		g.InitialBackoff = time.Duration(cfg.Reliability.ChannelInitialBackoffSecs) * time.Second
	}
	if cfg.Reliability.ChannelMaxBackoffSecs > 0 {
		g.MaxBackoff = time.Duration(cfg.Reliability.ChannelMaxBackoffSecs) * time.Second
	}
	c.mu.Lock()
	var stopping []*runner
	for key, r := range c.runners {
		if inst, ok := want[key]; !ok || !reflect.DeepEqual(inst, r.inst) || r.g != g {
			stopping = append(stopping, r)
			delete(c.runners, key)
		}
	}
	c.mu.Unlock()
	for _, r := range stopping { // drain: its running turns finish and their answers are sent
		r.stop(true)
		c.o.Logger.Info("channel stopped", "channel", r.inst.ID.String())
	}
	for key, inst := range want {
		c.mu.Lock()
		_, running := c.runners[key]
		c.mu.Unlock()
		if running {
			continue
		}
		ad, err := c.o.Registry.New(inst, c.o.Deps)
		if err != nil {
			c.o.Logger.Warn("channel not started", "channel", key, "error", err)
			r := newRunner(c, inst, g, nil)
			r.setError(fmt.Errorf("build adapter: %w", err), StateParked)
			c.mu.Lock()
			c.runners[key] = r
			c.mu.Unlock()
			continue
		}
		r := newRunner(c, inst, g, ad)
		c.mu.Lock()
		c.runners[key] = r
		c.mu.Unlock()
		r.start(ctx)
		c.o.Logger.Info("channel started", "channel", key, "agent", inst.Agent)
	}
}

// Channel states (Status.State).
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateBackoff  = "backoff" // the adapter failed; it restarts after a backoff
	StateParked   = "parked"  // a permanent failure: it waits for a config change
	StateStale    = "stale"   // running, but no progress for Options.StaleAfter
)

// Status is one channel's state as status, doctor, /health and GET /api/channels show it.
type Status struct {
	ID             string         `json:"id"`
	Type           string         `json:"type"`
	Alias          string         `json:"alias"`
	Agent          string         `json:"agent,omitempty"`
	State          string         `json:"state"`
	LastEventAt    *time.Time     `json:"last_event_at,omitempty"`
	LastProgressAt *time.Time     `json:"last_progress_at,omitempty"`
	LastError      string         `json:"last_error,omitempty"`
	Restarts       int            `json:"restarts"`
	Ignored        int            `json:"ignored"` // messages from senders not allowed, since the channel started
	Counts         map[string]int `json:"counts,omitempty"`
	// Warnings are config problems that leave the channel deaf: no agent owns it, nobody is allowed in.
	Warnings []string `json:"warnings,omitempty"`
}

// Healthy reports whether the channel is running and making progress.
func (s Status) Healthy() bool { return s.State == StateRunning }

// Status lists every configured channel, sorted by id, with its durable counts (events by state, outbox rows
// by state: out:unconfirmed counts replies whose delivery a crash left unknown).
func (c *Core) Status(ctx context.Context) []Status {
	c.mu.Lock()
	keys := sortedKeys(c.runners)
	rs := make([]*runner, len(keys))
	for i, k := range keys {
		rs[i] = c.runners[k]
	}
	c.mu.Unlock()
	out := make([]Status, 0, len(rs))
	for _, r := range rs {
		st := r.status()
		if counts, err := c.o.Store.ChannelCounts(ctx, st.ID); err == nil {
			st.Counts = counts
		}
		out = append(out, st)
	}
	return out
}

// States lists every configured channel's id and state, sorted by id, without reading the store.
func (c *Core) States() []Status {
	c.mu.Lock()
	keys := sortedKeys(c.runners)
	rs := make([]*runner, len(keys))
	for i, k := range keys {
		rs[i] = c.runners[k]
	}
	c.mu.Unlock()
	out := make([]Status, len(rs))
	for i, r := range rs {
		out[i] = r.status()
	}
	return out
}

// Notify implements Notifier: the text is queued in the channel's outbox (split per its limit) and sent like
// any reply.
func (c *Core) Notify(ctx context.Context, target, text string) error {
	id, recipient, ok := ParseTarget(target)
	if !ok {
		return fmt.Errorf("channel: notify target %q: want <type>[.<alias>]:<recipient>", target)
	}
	c.mu.Lock()
	var r *runner
	for _, k := range sortedKeys(c.runners) {
		cand := c.runners[k]
		if cand.inst.ID == id || id.Alias == "" && cand.inst.ID.Type == id.Type {
			r = cand
			break
		}
	}
	c.mu.Unlock()
	if r == nil || r.ad == nil {
		return fmt.Errorf("channel: notify %s: %w", id, ErrNoChannel)
	}
	return r.queue(ctx, 0, recipient, "", "", text)
}

// ErrNoChannel: no running channel has that id.
var ErrNoChannel = errors.New("channel: no such channel")
