// Package discord is the Discord channel: the Gateway WebSocket v10 for inbound events (HELLO, heartbeats with
// ACKs, IDENTIFY or RESUME, MESSAGE_CREATE and INTERACTION_CREATE dispatches, RECONNECT, INVALID_SESSION) and
// REST v10 for replies (a nonce with enforce_nonce, so a resend is deduplicated by Discord), typing and the
// approval buttons' interaction callbacks. The sequence number a RESUME replays from advances past a dispatch
// only after the core recorded it, and is kept under the channel's data directory, so a restarted daemon
// resumes its session and receives what was sent while it was down.
package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Bounds on what the gateway (or something posing as it) can make the adapter hold or do.
const (
	// maxFrameBytes is the websocket read limit: a GUILD_CREATE of a large guild is the biggest frame.
	maxFrameBytes   = 8 << 20
	helloTimeout    = 20 * time.Second
	writeTimeout    = 10 * time.Second
	minHeartbeat    = 50 * time.Millisecond
	maxHeartbeat    = 5 * time.Minute
	maxSessionIDLen = 256
	// maxStateBytes bounds the state file read (a session and maxCursors cursors need well under it).
	maxStateBytes = 64 << 10
	// minConnGap spaces reconnects the adapter makes itself (RECONNECT, a dead connection).
	minConnGap = time.Second
)

// Type is the discord platform for a channel.Registry.
func Type() channel.Type {
	return channel.Type{Name: "discord",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, c := range cfg.Channels.Discord {
				if c.Enabled {
					out[alias] = c
				}
			}
			return out
		},
		ApprovalTimeout: func(s any) time.Duration {
			return time.Duration(s.(config.DiscordConfig).ApprovalTimeoutSecs) * time.Second
		},
		ExcludedTools: func(s any) []string { return s.(config.DiscordConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			dir := ""
			if deps.DataDir != "" {
				dir = filepath.Join(deps.DataDir, inst.ID.String())
			}
			return New(inst.ID, inst.Settings.(config.DiscordConfig), deps.HTTP, dir)
		},
	}
}

// Adapter is one bot.
type Adapter struct {
	id      channel.ID
	token   string
	api     string // <api_base_url>/api/v10
	hc      *http.Client
	intents int64
	filter  Filter // BotID is set from READY (Run only)
	rl      limiter
	// stateFile keeps the gateway session across restarts ("": memory only).
	stateFile string
	// invalidWait is the pause after INVALID_SESSION (Discord asks for 1 to 5 s).
	invalidWait func() time.Duration

	mu     sync.Mutex // guards st and loaded
	st     gwState
	loaded bool
}

// gwState is what a RESUME needs.
type gwState struct {
	SessionID string `json:"session_id"`
	ResumeURL string `json:"resume_gateway_url"`
	Seq       int64  `json:"seq"`
	BotID     string `json:"bot_id"`
	// TokenHash binds the state to the token it was made with: another token's session is not resumed.
	TokenHash string `json:"token_hash"`
	// Cursors is the last message recorded per channel (catchup.go); they outlive the session.
	Cursors map[string]cursor `json:"cursors,omitempty"`
	// CatchUp: a new session began after messages were recorded, and what was sent meanwhile is not read yet.
	CatchUp bool `json:"catch_up,omitempty"`
}

// forget is the state without its session: a RESUME is no longer possible, the catch-up cursors stay.
func (s *gwState) forget() { *s = gwState{BotID: s.BotID, Cursors: s.Cursors, CatchUp: s.CatchUp} }

// New builds the adapter of one [channels.discord.<alias>] entry; dataDir ("" : none) holds its gateway state.
func New(id channel.ID, c config.DiscordConfig, hc *http.Client, dataDir string) (*Adapter, error) {
	if c.BotToken == "" {
		return nil, fmt.Errorf("discord %s: bot_token is empty: %w", id, channel.ErrPermanent)
	}
	if strings.ContainsAny(c.BotToken, " \t\r\n") {
		return nil, fmt.Errorf("discord %s: bot_token has characters a token never has: %w", id, channel.ErrPermanent)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	base := strings.TrimRight(c.APIBaseURL, "/")
	if base == "" {
		base = "https://discord.com"
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("discord %s: api_base_url %q is not an http(s) URL: %w", id, clip(base, 80), channel.ErrPermanent)
	}
	intents := c.IntentsMask
	if intents <= 0 {
		intents = defaultIntents
	}
	a := &Adapter{id: id, token: c.BotToken, api: base + "/api/v10", hc: hc, intents: intents,
		filter:      Filter{GuildIDs: c.GuildIDs, ChannelIDs: c.ChannelIDs, ListenToBots: c.ListenToBots, MentionOnly: c.MentionOnly},
		invalidWait: func() time.Duration { return time.Second + rand.N(4*time.Second) }}
	if dataDir != "" {
		a.stateFile = filepath.Join(dataDir, "gateway.json")
	}
	return a, nil
}

// ID implements channel.Adapter.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits implements channel.Adapter.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: MaxMessageRunes} }

func (a *Adapter) tokenHash() string {
	h := sha256.Sum256([]byte("zeroclaw discord gateway state\x00" + a.token))
	return hex.EncodeToString(h[:8])
}

// state returns the session to resume, loading it from disk once.
func (a *Adapter) state() gwState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.loaded {
		a.loaded = true
		if st, ok := a.readState(); ok {
			a.st = st
		}
	}
	st := a.st
	st.Cursors = maps.Clone(st.Cursors) // the caller reads it without the lock
	return st
}

func (a *Adapter) readState() (gwState, bool) {
	if a.stateFile == "" {
		return gwState{}, false
	}
	f, err := os.Open(a.stateFile)
	if err != nil {
		return gwState{}, false
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxStateBytes))
	var st gwState
	if err != nil || json.Unmarshal(raw, &st) != nil || st.TokenHash != a.tokenHash() ||
		len(st.SessionID) > maxSessionIDLen || (st.SessionID != "" || st.ResumeURL != "") && checkWS(st.ResumeURL) != nil || st.Seq < 0 || !validCursors(st.Cursors) {
		return gwState{}, false
	}
	return st, true
}

// update changes the session under the lock and, when persist, writes it (a failed write only means a restart
// identifies afresh, or replays events the core already has).
func (a *Adapter) update(persist bool, f func(*gwState)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(&a.st)
	if !persist || a.stateFile == "" {
		return
	}
	st := a.st
	st.TokenHash = a.tokenHash()
	raw, _ := json.Marshal(st)
	if st.SessionID == "" && len(st.Cursors) == 0 {
		_ = os.Remove(a.stateFile)
		return
	}
	if err := os.MkdirAll(filepath.Dir(a.stateFile), 0o700); err == nil {
		_ = atomicfile.WriteFile(a.stateFile, raw, 0o600)
	}
}

// Connection endings the adapter handles itself by connecting again.
var (
	errReconnect      = errors.New("discord gateway: RECONNECT")
	errInvalidSession = errors.New("discord gateway: INVALID_SESSION")
	errZombie         = errors.New("discord gateway: no heartbeat ACK since the last heartbeat (a dead connection)")
)

// connErr is the connection closing (by the peer or a failed read).
type connErr struct{ err error }

func (e *connErr) Error() string { return "discord gateway: " + e.err.Error() }
func (e *connErr) Unwrap() error { return e.err }

// Run implements channel.Adapter: one gateway connection after another. A connection that made progress and
// ended the way connections end (RECONNECT, INVALID_SESSION, a close, a dead heartbeat) is replaced at once
// (resumed where possible, at most one a second); anything else is returned to the core's supervisor.
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	for {
		start := time.Now()
		progressed, err := a.connect(ctx, d)
		if ctx.Err() != nil {
			return nil
		}
		var ce *connErr
		internal := errors.Is(err, errReconnect) || errors.Is(err, errInvalidSession) || errors.Is(err, errZombie) || errors.As(err, &ce)
		if errors.Is(err, channel.ErrPermanent) || !progressed || !internal {
			return err
		}
		if wait := minConnGap - time.Since(start); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

func (a *Adapter) write(ctx context.Context, c *websocket.Conn, op int, d any) error {
	raw, err := json.Marshal(map[string]any{"op": op, "d": d})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return c.Write(wctx, websocket.MessageText, raw)
}

func read(ctx context.Context, c *websocket.Conn) (payload, error) {
	typ, raw, err := c.Read(ctx)
	if err != nil {
		return payload{}, err
	}
	var p payload
	if typ != websocket.MessageText {
		return p, errors.New("discord gateway: a binary frame (compression was not asked for)")
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("discord gateway: not a gateway frame: %w", err)
	}
	return p, nil
}

// closeErr classifies a failed read: the fatal close codes are permanent (with what to fix), the ones that
// end the session forget it, the rest resume.
func (a *Adapter) closeErr(err error) error {
	code := websocket.CloseStatus(err)
	hint := ""
	switch code {
	case 4004:
		hint = "authentication failed (check bot_token)"
	case 4010:
		hint = "invalid shard"
	case 4011:
		hint = "sharding required: the bot is in too many guilds for one connection, which this runtime does not shard"
	case 4012:
		hint = "invalid API version"
	case 4013:
		hint = "invalid intents (check intents_mask)"
	case 4014:
		hint = "disallowed intents: enable the Message Content intent under Bot → Privileged Gateway Intents in the Developer Portal, or set intents_mask"
	case 4007, 4009:
		a.update(true, (*gwState).forget)
	}
	if hint != "" {
		return fmt.Errorf("discord gateway: closed %d, %s: %w", code, hint, channel.ErrPermanent)
	}
	return &connErr{err}
}

// connect runs one gateway connection until it ends; progressed reports whether it made a round trip.
func (a *Adapter) connect(ctx context.Context, d channel.Deliverer) (progressed bool, err error) {
	st := a.state()
	resume := st.SessionID != "" && st.ResumeURL != ""
	gw := st.ResumeURL
	if !resume {
		if gw, err = a.gatewayURL(ctx); err != nil {
			return false, err
		}
	}
	u, _ := url.Parse(gw)
	u.RawQuery = "v=10&encoding=json"
	dctx, cancel := context.WithTimeout(ctx, helloTimeout)
	c, _, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPHeader: http.Header{"User-Agent": {userAgent}}})
	cancel()
	if err != nil {
		return false, fmt.Errorf("discord gateway: dial: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(maxFrameBytes)
	cctx, ccancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		ccancel(nil)
		wg.Wait()
		if ctx.Err() != nil || errors.Is(err, errReconnect) {
			// Not 1000/1001: those end the session; this one stays resumable for a restart.
			_ = c.Close(4000, "reconnecting")
		}
	}()

	hctx, hcancel := context.WithTimeout(cctx, helloTimeout)
	p, err := read(hctx, c)
	hcancel()
	if err != nil {
		if ctx.Err() == nil && hctx.Err() != nil {
			return false, errors.New("discord gateway: no HELLO")
		}
		return false, a.closeErr(err)
	}
	var h hello
	if p.Op != opHello || json.Unmarshal(p.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return false, fmt.Errorf("discord gateway: first frame is op %d, not HELLO", p.Op)
	}
	interval := min(max(time.Duration(h.HeartbeatInterval)*time.Millisecond, minHeartbeat), maxHeartbeat)

	if resume {
		err = a.write(cctx, c, opResume, map[string]any{"token": a.token, "session_id": st.SessionID, "seq": st.Seq})
	} else {
		err = a.write(cctx, c, opIdentify, map[string]any{"token": a.token, "intents": a.intents,
			"properties": map[string]string{"os": "linux", "browser": "zeroclaw", "device": "zeroclaw"}})
	}
	if err != nil {
		return false, &connErr{err}
	}
	if st.BotID != "" {
		a.filter.BotID = st.BotID
	}

	catching := false
	var acked atomic.Bool
	acked.Store(true)
	beatNow := make(chan struct{}, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(time.Duration(rand.Float64() * float64(interval))) // the first beat is jittered
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-beatNow:
			case <-t.C:
				if !acked.Swap(false) {
					ccancel(errZombie)
					return
				}
				t.Reset(interval)
			}
			var seq any
			if s := a.state().Seq; s > 0 {
				seq = s
			}
			if err := a.write(cctx, c, opHeartbeat, seq); err != nil {
				ccancel(&connErr{err})
				return
			}
		}
	}()

	for {
		p, err := read(cctx, c)
		if err != nil {
			if cause := context.Cause(cctx); cctx.Err() != nil && ctx.Err() == nil && cause != nil {
				return progressed, cause
			}
			if ctx.Err() != nil {
				return progressed, ctx.Err()
			}
			return progressed, a.closeErr(err)
		}
		switch p.Op {
		case opHeartbeatAck:
			acked.Store(true)
			progressed = true
			d.Progress()
		case opHeartbeat:
			select {
			case beatNow <- struct{}{}:
			default:
			}
		case opReconnect:
			return progressed, errReconnect
		case opInvalidSession:
			var resumable bool
			_ = json.Unmarshal(p.D, &resumable)
			if !resumable {
				a.update(true, (*gwState).forget)
			}
			t := time.NewTimer(a.invalidWait())
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			return true, errInvalidSession
		case opDispatch:
			persist, err := a.dispatch(ctx, d, p)
			if err != nil {
				return progressed, err
			}
			if (p.T == "READY" || p.T == "RESUMED") && !catching && a.state().CatchUp {
				catching = true // what a lost session missed, read from REST beside the gateway's events
				wg.Add(1)
				go func() { defer wg.Done(); a.catchUpLoop(cctx, d) }()
			}
			progressed = true
			d.Progress()
			if p.S != nil && *p.S > 0 {
				a.update(persist, func(s *gwState) { s.Seq = max(s.Seq, *p.S) })
			}
		}
	}
}

// dispatch handles one DISPATCH; persist says the session state is worth writing after it (a session
// change, an event the core recorded).
func (a *Adapter) dispatch(ctx context.Context, d channel.Deliverer, p payload) (persist bool, err error) {
	var ev channel.Inbound
	var ok bool
	switch p.T {
	case "READY":
		var r ready
		if err := json.Unmarshal(p.D, &r); err != nil || r.SessionID == "" || len(r.SessionID) > maxSessionIDLen {
			return false, errors.New("discord gateway: a READY without a session")
		}
		resumeURL := r.ResumeGatewayURL
		if checkWS(resumeURL) != nil {
			resumeURL = "" // cannot resume: the next connection identifies
		}
		if snowflake(r.User.ID) {
			a.filter.BotID = r.User.ID
		}
		a.update(false, func(s *gwState) {
			*s = gwState{SessionID: r.SessionID, ResumeURL: resumeURL, BotID: a.filter.BotID, Cursors: s.Cursors,
				CatchUp: len(s.Cursors) > 0}
		})
		return true, nil
	case "RESUMED":
		return true, nil
	case "MESSAGE_CREATE":
		ev, ok, err = DecodeMessage(p.D, a.filter)
	case "INTERACTION_CREATE":
		ev, ok, err = DecodeInteraction(p.D)
	default:
		return false, nil
	}
	if err != nil || !ok {
		return false, nil // undecodable or not taken: skipped (it would block every later event)
	}
	if err := d.Deliver(ctx, ev); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, fmt.Errorf("discord: record event %s: %w", ev.EventID, err)
	}
	if p.T == "MESSAGE_CREATE" {
		var g struct {
			GuildID string `json:"guild_id"`
		}
		_ = json.Unmarshal(p.D, &g)
		a.update(false, func(s *gwState) { s.noteCursor(ev.ReplyTarget, ev.MessageID, g.GuildID) })
	}
	return true, nil
}
