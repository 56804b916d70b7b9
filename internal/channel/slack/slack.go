// Package slack is the Slack channel: Socket Mode for what arrives (apps.connections.open with the app-level
// token, then a WebSocket of hello / events_api / interactive / disconnect envelopes, each acknowledged by its
// envelope_id only after the core recorded it) and the Web API with the bot token for what goes out
// (chat.postMessage, approval buttons as Block Kit, chat.postEphemeral for the presser's notice). Every reply
// carries message metadata naming the core's key, so after a crash between sending and recording, WasSent
// finds it in conversations.history / conversations.replies instead of sending it twice.
//
// The client is ours, on net/http and github.com/coder/websocket: slack-go's socketmode cannot bound the size of
// a frame it reads (a hostile endpoint could make it hold any amount), and it hides the round trips the core's
// liveness is judged by.
package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Bounds on what Slack (or something posing as it) can make the adapter hold.
const (
	maxResponseBytes = 4 << 20
	maxFrameBytes    = 1 << 20 // a Socket Mode envelope; Slack's are a few KiB
	// MaxMessageRunes is what one reply carries: Slack takes 40 000 characters of text, and escaping (&amp;
	// is five) can make a reply up to five times longer on the wire.
	MaxMessageRunes = 8000
	maxHistoryPages = 10 // WasSent: pages of 200 messages after the anchor it looks through
)

// Type is the slack platform for a channel.Registry.
func Type() channel.Type {
	return channel.Type{Name: "slack",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, c := range cfg.Channels.Slack {
				if c.Enabled {
					out[alias] = c
				}
			}
			return out
		},
		ApprovalTimeout: func(s any) time.Duration {
			return time.Duration(s.(config.SlackConfig).ApprovalTimeoutSecs) * time.Second
		},
		ExcludedTools: func(s any) []string { return s.(config.SlackConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			return New(inst.ID, inst.Settings.(config.SlackConfig), deps.HTTP)
		},
	}
}

// Adapter is one Slack app.
type Adapter struct {
	id            channel.ID
	base          string // Web API base, no trailing '/'
	bot, app      string // xoxb, xapp
	hc            *http.Client
	channels      map[string]bool // channel_ids; empty: every conversation
	threadReplies bool
	mentionOnly   bool
	t             Timings
}

// Timings are the adapter's clocks; tests shorten them.
type Timings struct {
	PingEvery   time.Duration // a WebSocket ping this often; its pong is a round trip (Progress)
	PingTimeout time.Duration // no pong within: the connection is dead and is reopened
	CallTimeout time.Duration // one Web API call or WebSocket dial at most
	Reopen      time.Duration // at least this long between two connections (a disconnect storm cannot spin)
}

// DefaultTimings are the daemon's.
var DefaultTimings = Timings{PingEvery: 15 * time.Second, PingTimeout: 10 * time.Second, CallTimeout: 30 * time.Second,
	Reopen: time.Second}

func envOr(v string, names ...string) string {
	for _, n := range names {
		if v != "" {
			break
		}
		v = strings.TrimSpace(os.Getenv(n))
	}
	return v
}

// New builds the adapter of one [channels.slack.<alias>] entry; empty tokens come from the environment.
func New(id channel.ID, c config.SlackConfig, hc *http.Client) (*Adapter, error) {
	return NewWithTimings(id, c, hc, DefaultTimings)
}

// NewWithTimings is New with other clocks.
func NewWithTimings(id channel.ID, c config.SlackConfig, hc *http.Client, t Timings) (*Adapter, error) {
	bot := envOr(c.BotToken, "ZEROCLAW_SLACK_BOT_TOKEN", "SLACK_BOT_TOKEN")
	app := envOr(c.AppToken, "ZEROCLAW_SLACK_APP_TOKEN", "SLACK_APP_TOKEN")
	switch {
	case bot == "":
		return nil, fmt.Errorf("slack %s: bot_token is empty (nor is ZEROCLAW_SLACK_BOT_TOKEN or SLACK_BOT_TOKEN set): %w", id, channel.ErrPermanent)
	case app == "":
		return nil, fmt.Errorf("slack %s: app_token is empty (nor is ZEROCLAW_SLACK_APP_TOKEN or SLACK_APP_TOKEN set); Socket Mode needs it: %w", id, channel.ErrPermanent)
	case strings.ContainsAny(bot+app, " \t\r\n"):
		return nil, fmt.Errorf("slack %s: a token has characters a token never has: %w", id, channel.ErrPermanent)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	base := strings.TrimRight(c.APIBaseURL, "/")
	if base == "" {
		base = "https://slack.com/api"
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("slack %s: api_base_url %q is not an http(s) URL: %w", id, base, channel.ErrPermanent)
	}
	a := &Adapter{id: id, base: base, bot: bot, app: app, hc: hc, threadReplies: c.ThreadReplies, mentionOnly: c.MentionOnly, t: t}
	if len(c.ChannelIDs) > 0 {
		a.channels = map[string]bool{}
		for _, ch := range c.ChannelIDs {
			a.channels[strings.TrimSpace(ch)] = true
		}
	}
	return a, nil
}

// ID implements channel.Adapter.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits implements channel.Adapter.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: MaxMessageRunes} }

// APIError is a Web API answer with ok = false (or a status that is not 200).
type APIError struct {
	Method string
	Status int
	Code   string // Slack's error: invalid_auth, channel_not_found, ...
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("slack %s: status %d", e.Method, e.Status)
	}
	return fmt.Sprintf("slack %s: %s", e.Method, e.Code)
}

// permanentCodes are Web API errors retrying cannot fix.
var permanentCodes = map[string]string{
	"invalid_auth": "check bot_token / app_token", "not_authed": "check bot_token / app_token",
	"account_inactive": "the token's user or app was deactivated", "token_revoked": "the token was revoked",
	"token_expired": "the token expired", "not_allowed_token_type": "app_token must be an app-level xapp- token with connections:write",
	"missing_scope": "the app lacks a scope", "no_permission": "the app lacks a permission", "team_access_not_granted": "the app is not installed here",
	"channel_not_found": "", "not_in_channel": "invite the bot to the channel", "is_archived": "", "msg_too_long": "",
	"no_text": "", "invalid_blocks": "", "invalid_metadata_format": "", "user_not_in_channel": "", "invalid_arguments": "",
}

// call posts to method with token, as JSON (body non-nil map) or a form, and decodes the answer. Tokens travel
// in the Authorization header only; no error names one.
func (a *Adapter) call(ctx context.Context, method, token string, body map[string]any, form url.Values, out *apiResponse) error {
	ctx, cancel := context.WithTimeout(ctx, a.t.CallTimeout)
	defer cancel()
	var rd io.Reader
	ctype := "application/x-www-form-urlencoded"
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd, ctype = bytes.NewReader(raw), "application/json; charset=utf-8"
	} else {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/"+method, rd)
	if err != nil {
		return fmt.Errorf("slack %s: bad api_base_url: %w", method, channel.ErrPermanent)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := a.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("slack %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("slack %s: read: %w", method, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		after := time.Second
		if n, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && n > 0 {
			after = time.Duration(min(n, 3600)) * time.Second
		}
		return &channel.RetryAfter{After: after, Err: &APIError{Method: method, Status: resp.StatusCode, Code: "ratelimited"}}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %w", &APIError{Method: method, Status: resp.StatusCode}, channel.ErrPermanent)
	case resp.StatusCode != http.StatusOK:
		return &APIError{Method: method, Status: resp.StatusCode}
	case len(raw) > maxResponseBytes:
		return fmt.Errorf("slack %s: answer larger than %d bytes", method, maxResponseBytes)
	}
	var r apiResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("slack %s: status %d, not a Web API answer", method, resp.StatusCode)
	}
	if !r.OK {
		e := &APIError{Method: method, Status: resp.StatusCode, Code: clip(r.Error, 80)}
		if hint, perm := permanentCodes[r.Error]; perm {
			if hint != "" {
				return fmt.Errorf("%w (%s): %w", e, hint, channel.ErrPermanent)
			}
			return fmt.Errorf("%w: %w", e, channel.ErrPermanent)
		}
		if r.Error == "ratelimited" {
			return &channel.RetryAfter{After: time.Second, Err: e}
		}
		return e
	}
	if out != nil {
		*out = r
	}
	return nil
}

// errRefresh is a disconnect envelope asking for a fresh connection.
var errRefresh = errors.New("slack: disconnect requested")

// Run implements channel.Adapter: auth.test learns the bot's own user id (its messages are not answered), then
// Socket Mode connections are opened one after another; a disconnect envelope opens the next one at once, a
// dead or failed one returns to the supervisor's backoff.
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	var me apiResponse
	if err := a.call(ctx, "auth.test", a.bot, nil, url.Values{}, &me); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	d.Progress()
	v := view{botUser: me.UserID, threadReplies: a.threadReplies}
	last := time.Time{}
	for {
		if wait := a.t.Reopen - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		last = time.Now()
		err := a.session(ctx, d, v)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, errRefresh) {
			return err
		}
	}
}

// session is one Socket Mode connection: it returns errRefresh on a disconnect envelope, else the failure that
// ended it.
func (a *Adapter) session(ctx context.Context, d channel.Deliverer, v view) error {
	var open apiResponse
	if err := a.call(ctx, "apps.connections.open", a.app, nil, url.Values{}, &open); err != nil {
		return err
	}
	u, err := url.Parse(open.URL)
	if err != nil || !(u.Scheme == "wss" || u.Scheme == "ws" && strings.HasPrefix(a.base, "http://")) || u.Host == "" {
		return errors.New("slack apps.connections.open: the answer has no wss:// url")
	}
	dctx, cancel := context.WithTimeout(ctx, a.t.CallTimeout)
	c, resp, err := websocket.Dial(dctx, open.URL, &websocket.DialOptions{HTTPClient: a.dialClient()})
	cancel()
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return fmt.Errorf("slack: socket mode connection failed: %s", scrubTicket(err.Error(), u))
	}
	defer c.CloseNow()
	c.SetReadLimit(maxFrameBytes)

	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	var deadPing atomic.Bool
	go func() {
		t := time.NewTicker(a.t.PingEvery)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
			tctx, cancel := context.WithTimeout(pctx, a.t.PingTimeout)
			err := c.Ping(tctx)
			cancel()
			if err != nil {
				if pctx.Err() == nil {
					deadPing.Store(true)
					c.CloseNow()
				}
				return
			}
			d.Progress()
		}
	}()

	for {
		typ, raw, err := c.Read(ctx)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case deadPing.Load():
				return fmt.Errorf("slack: no pong within %s: the socket is dead", a.t.PingTimeout)
			}
			return fmt.Errorf("slack: socket closed: %s", scrubTicket(err.Error(), u))
		}
		if typ != websocket.MessageText {
			continue
		}
		e, err := DecodeEnvelope(raw)
		if err != nil {
			continue
		}
		switch e.Type {
		case "hello":
			d.Progress()
			continue
		case "disconnect":
			if e.Reason == "link_disabled" {
				return fmt.Errorf("slack: socket mode was turned off for this app (disconnect link_disabled): %w", channel.ErrPermanent)
			}
			_ = c.Close(websocket.StatusNormalClosure, "")
			return errRefresh
		}
		if e.EnvelopeID == "" || len(e.EnvelopeID) > 256 {
			continue // nothing to acknowledge it by
		}
		if ev, ok := v.decode(e); ok && a.wanted(ev, v) {
			if err := d.Deliver(ctx, ev); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				// Not acknowledged: Slack sends it again (retry_attempt), on this connection or the next.
				return fmt.Errorf("slack: record envelope: %w", err)
			}
		}
		ack, _ := json.Marshal(map[string]string{"envelope_id": e.EnvelopeID})
		wctx, cancel := context.WithTimeout(ctx, a.t.CallTimeout)
		err = c.Write(wctx, websocket.MessageText, ack)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("slack: acknowledge envelope: %w", err)
		}
		d.Progress()
	}
}

// scrubTicket removes the socket url's query (the connection's ticket) from msg, in the ws(s):// form Slack
// gave and the http(s):// form the handshake request (and its errors) use.
func scrubTicket(msg string, u *url.URL) string {
	bare := *u
	bare.RawQuery, bare.Fragment = "", ""
	for _, scheme := range []string{u.Scheme, "http", "https"} {
		v := *u
		v.Scheme = scheme
		b := bare
		b.Scheme = scheme
		msg = strings.ReplaceAll(msg, v.String(), b.String())
	}
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "…")
	}
	return msg
}

// dialClient is the client for the WebSocket handshake (coder/websocket wants one without a Timeout).
func (a *Adapter) dialClient() *http.Client {
	if a.hc.Timeout == 0 {
		return a.hc
	}
	c := *a.hc
	c.Timeout = 0
	return &c
}

// wanted applies channel_ids and mention_only.
func (a *Adapter) wanted(ev channel.Inbound, v view) bool {
	if a.channels != nil && !a.channels[ev.ReplyTarget] {
		return false
	}
	if a.mentionOnly && ev.Kind == channel.KindMessage && ev.Group && (v.botUser == "" || !strings.Contains(ev.Text, "<@"+v.botUser+">")) {
		return false
	}
	return true
}

// post sends chat.postMessage with p's fields and the reply's metadata.
func (a *Adapter) post(ctx context.Context, target, thread, key string, p map[string]any) (channel.Sent, error) {
	p["channel"] = target
	if a.threadReplies && thread != "" {
		p["thread_ts"] = thread
	}
	if key != "" {
		p["metadata"] = map[string]any{"event_type": metadataType, "event_payload": map[string]any{"key": key}}
	}
	var out apiResponse
	if err := a.call(ctx, "chat.postMessage", a.bot, p, nil, &out); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: out.TS}, nil
}

// Send implements channel.Adapter: the text is escaped, so it shows literally (no <!channel>, no hidden links).
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	return a.post(ctx, m.ReplyTarget, m.Thread, m.Key, map[string]any{"text": escape(m.Text), "unfurl_links": false, "unfurl_media": false})
}

// Prompt implements channel.Prompter: the question as plain text with Approve / Deny buttons whose values carry
// the token.
func (a *Adapter) Prompt(ctx context.Context, pr channel.ApprovalPrompt) (channel.Sent, error) {
	text := pr.Text
	if r := []rune(text); len(r) > 2900 { // a section's text takes 3000
		text = string(r[:2900]) + "…"
	}
	btn := func(label, id, style, value string) map[string]any {
		return map[string]any{"type": "button", "action_id": id, "style": style, "value": value,
			"text": map[string]any{"type": "plain_text", "text": label, "emoji": true}}
	}
	blocks := []any{
		map[string]any{"type": "section", "text": map[string]any{"type": "plain_text", "text": text, "emoji": false}},
		map[string]any{"type": "actions", "block_id": "zc_approval", "elements": []any{
			btn("✅ Approve", "zc_approve", "primary", actionPrefix+pr.Token+":a"),
			btn("❌ Deny", "zc_deny", "danger", actionPrefix+pr.Token+":d"),
		}},
	}
	return a.post(ctx, pr.ReplyTarget, pr.Thread, "", map[string]any{"text": escape(text), "blocks": blocks})
}

// AckApproval implements channel.Prompter: a notice only the presser sees (chat.postEphemeral).
func (a *Adapter) AckApproval(ctx context.Context, ans channel.ApprovalAnswer, notice string) error {
	ch, user, ok := strings.Cut(ans.AckID, " ")
	if !ok || !idLike(ch) || !idLike(user) {
		return nil
	}
	return a.call(ctx, "chat.postEphemeral", a.bot, map[string]any{"channel": ch, "user": user, "text": escape(notice)}, nil, nil)
}

// WasSent implements channel.SentChecker: the reply's conversation (its thread when replies go there) is read
// from the message it answers on, looking for the metadata key the reply carried. Found: sent. The whole
// range read without it: not sent. Anything else (no anchor, more than maxHistoryPages pages, an error):
// unknown, and the core counts the reply unconfirmed rather than risk sending it twice.
func (a *Adapter) WasSent(ctx context.Context, m channel.Outbound) (bool, channel.Sent, error) {
	if m.Key == "" || !tsLike(m.ReplyTo) || !idLike(m.ReplyTarget) {
		return false, channel.Sent{}, errors.New("slack: the reply has no message to look after")
	}
	method := "conversations.history"
	form := url.Values{"channel": {m.ReplyTarget}, "oldest": {m.ReplyTo}, "limit": {"200"}, "include_all_metadata": {"true"}}
	if a.threadReplies && tsLike(m.Thread) {
		method = "conversations.replies"
		form.Set("ts", m.Thread)
	}
	for range maxHistoryPages {
		var r apiResponse
		if err := a.call(ctx, method, a.bot, nil, form, &r); err != nil {
			return false, channel.Sent{}, err
		}
		for _, msg := range r.Messages {
			if md := msg.Metadata; md != nil && md.EventType == metadataType && md.EventPayload.Key == m.Key {
				return true, channel.Sent{MessageID: msg.TS}, nil
			}
		}
		if !r.HasMore || r.ResponseMetadata.NextCursor == "" {
			return false, channel.Sent{}, nil
		}
		form.Set("cursor", r.ResponseMetadata.NextCursor)
	}
	return false, channel.Sent{}, fmt.Errorf("slack: more than %d pages after the message answered: cannot tell", maxHistoryPages)
}
