// Package matrix is the Matrix channel: the client-server API v3 on net/http. Inbound by /sync long polling
// (m.room.message events, the event id as the platform id); the sync token is advanced, and written to the
// channel's data directory, only after every event of the batch was recorded by the core. Invites from allowed
// senders are joined. Replies are PUT with the outbox key's transaction id, which the homeserver dedupes, and a
// reply whose fate a crash left unknown is looked up by that transaction id (SentChecker). Approvals use a
// reply convention ("yes <token>" / "no <token>"). No end-to-end encryption: encrypted rooms are not read.
package matrix

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Bounds on what a homeserver (or something posing as one) can make the adapter hold.
const (
	maxSyncBytes     = 16 << 20 // one /sync answer
	maxResponseBytes = 1 << 20  // any other answer
	timelineLimit    = 50       // events per room per sync (the filter's limit)
	maxRoomsCached   = 4096     // rooms whose member count is remembered
	pollTimeout      = 30 * time.Second
	// MaxMessageRunes is what one message carries: at most 6 bytes of JSON per code point keeps an event well
	// under the spec's 65536 bytes (upstream's budget is 48000 bytes).
	MaxMessageRunes = 8000
)

// Type is the matrix platform for a channel.Registry.
func Type() channel.Type {
	return channel.Type{Name: "matrix",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, c := range cfg.Channels.Matrix {
				if c.Enabled {
					out[alias] = c
				}
			}
			return out
		},
		ApprovalTimeout: func(s any) time.Duration {
			return time.Duration(s.(config.MatrixConfig).ApprovalTimeoutSecs) * time.Second
		},
		ExcludedTools: func(s any) []string { return s.(config.MatrixConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			dir := ""
			if deps.DataDir != "" {
				dir = filepath.Join(deps.DataDir, inst.ID.String())
			}
			return New(inst.ID, inst.Settings.(config.MatrixConfig), Options{HTTP: deps.HTTP, Dir: dir,
				Logger: deps.Logger, Peers: inst.Peers})
		},
	}
}

// Options are an adapter's surroundings.
type Options struct {
	HTTP   *http.Client
	Dir    string // where the sync token and the login's device id are kept ("": memory only)
	Logger *slog.Logger
	// Peers decides whose invites are accepted (the channel's allow-list).
	Peers channel.Peers
	// PollTimeout is one /sync long poll (0: 30 s); RequestTimeout any other request (0: 30 s): a homeserver
	// that hangs cannot stall the outbox.
	PollTimeout, RequestTimeout time.Duration
}

// Adapter is one Matrix account.
type Adapter struct {
	id      channel.ID
	base    string
	cfg     config.MatrixConfig
	hc      *http.Client
	st      stateFile
	log     *slog.Logger
	peers   channel.Peers
	rooms   map[string]bool // allowed_rooms (empty: every joined room)
	timeout time.Duration
	reqTime time.Duration

	loginMu sync.Mutex // serialises logins

	mu        sync.Mutex // guards the fields below
	token     string
	self      string
	members   map[string]int
	encWarned map[string]bool
	aliases   map[string]string // room alias => room id
}

var (
	_ channel.Adapter     = (*Adapter)(nil)
	_ channel.Typer       = (*Adapter)(nil)
	_ channel.Prompter    = (*Adapter)(nil)
	_ channel.SentChecker = (*Adapter)(nil)
)

// New builds the adapter of one [channels.matrix.<alias>] entry.
func New(id channel.ID, c config.MatrixConfig, o Options) (*Adapter, error) {
	u, err := url.Parse(c.Homeserver)
	if c.Homeserver == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("matrix %s: homeserver must be an http(s) URL: %w", id, channel.ErrPermanent)
	}
	if c.AccessToken == "" && (c.UserID == "" || c.Password == "") {
		return nil, fmt.Errorf("matrix %s: set access_token, or user_id and password: %w", id, channel.ErrPermanent)
	}
	if strings.ContainsAny(c.AccessToken, " \r\n\t") {
		return nil, fmt.Errorf("matrix %s: access_token has characters a token never has: %w", id, channel.ErrPermanent)
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = pollTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	a := &Adapter{id: id, base: strings.TrimRight(c.Homeserver, "/"), cfg: c, hc: o.HTTP, st: newStateFile(o.Dir),
		log: o.Logger.With("channel", id.String()), peers: o.Peers, timeout: o.PollTimeout, reqTime: o.RequestTimeout,
		members: map[string]int{}, encWarned: map[string]bool{}, aliases: map[string]string{}}
	if len(c.AllowedRooms) > 0 {
		a.rooms = map[string]bool{}
		for _, r := range c.AllowedRooms {
			a.rooms[strings.ToLower(strings.TrimSpace(r))] = true // matched ignoring ASCII case, as upstream
		}
	}
	if c.AccessToken != "" {
		a.token, a.self = c.AccessToken, c.UserID
	}
	return a, nil
}

// ID implements channel.Adapter.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits implements channel.Adapter.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: MaxMessageRunes} }

// apiError is a homeserver's error answer.
type apiError struct {
	op      string
	status  int
	errcode string
	desc    string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("matrix %s: %d %s %s", e.op, e.status, e.errcode, e.desc)
}

// errAuth marks a rejected access token (401, M_UNKNOWN_TOKEN).
var errAuth = errors.New("matrix: the homeserver rejected the access token")

// call does one request. op names it in errors (never the URL's query, never the token). raw (if non-nil)
// receives the answer body; out (if non-nil) its decoding.
func (a *Adapter) call(ctx context.Context, op, method, path string, q url.Values, body any, limit int64, out any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	if op != "sync" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.reqTime)
		defer cancel()
	}
	u := a.base + "/_matrix/client/v3" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("matrix %s: bad homeserver URL: %w", op, channel.ErrPermanent)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	a.mu.Lock()
	token := a.token
	a.mu.Unlock()
	if token != "" && op != "login" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ctx.Err() == nil {
			return nil, fmt.Errorf("matrix %s: %w", op, ue.Err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("matrix %s: %w", op, ctx.Err())
		}
		return nil, fmt.Errorf("matrix %s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("matrix %s: read: %w", op, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("matrix %s: answer larger than %d bytes", op, limit)
	}
	if resp.StatusCode/100 != 2 {
		return nil, a.failure(op, resp, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("matrix %s: status %d, not a client-server API answer", op, resp.StatusCode)
		}
	}
	return raw, nil
}

// failure classifies an error answer: 429 / M_LIMIT_EXCEEDED is a *channel.RetryAfter (retry_after_ms, else
// Retry-After, else 1 s); a rejected token is errAuth (permanent with a configured token; a password login is
// retried with a fresh login); a refused send (403, 404, 400) is permanent.
func (a *Adapter) failure(op string, resp *http.Response, raw []byte) error {
	var me matrixError
	_ = json.Unmarshal(raw, &me)
	e := &apiError{op: op, status: resp.StatusCode, errcode: clip(me.ErrCode, 64), desc: clip(me.Error, 200)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || me.ErrCode == "M_LIMIT_EXCEEDED":
		after := time.Second
		if me.RetryAfterMS > 0 {
			after = time.Duration(min(me.RetryAfterMS, 3600_000)) * time.Millisecond
		} else if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(min(s, 3600)) * time.Second
		}
		return &channel.RetryAfter{After: after, Err: e}
	case resp.StatusCode == http.StatusUnauthorized || me.ErrCode == "M_UNKNOWN_TOKEN" || me.ErrCode == "M_MISSING_TOKEN":
		if a.cfg.AccessToken == "" { // a password login: log in again on the next call
			a.mu.Lock()
			a.token = ""
			a.mu.Unlock()
			return fmt.Errorf("%w: %w", e, errAuth)
		}
		return fmt.Errorf("%w (check access_token): %w: %w", e, errAuth, channel.ErrPermanent)
	case op == "login" && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusBadRequest):
		return fmt.Errorf("%w (check user_id and password): %w", e, channel.ErrPermanent)
	case (op == "send" || op == "typing") && resp.StatusCode/100 == 4:
		return fmt.Errorf("%w: %w", e, channel.ErrPermanent)
	}
	return e
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// session returns the access token and the bot's user id, logging in (password) or asking whoami (token) when
// they are not known yet.
func (a *Adapter) session(ctx context.Context) (self string, err error) {
	a.loginMu.Lock()
	defer a.loginMu.Unlock()
	a.mu.Lock()
	token, self := a.token, a.self
	a.mu.Unlock()
	if token != "" && self != "" {
		return self, nil
	}
	if token != "" { // a configured token: whose is it?
		var who struct {
			UserID string `json:"user_id"`
		}
		if _, err := a.call(ctx, "whoami", http.MethodGet, "/account/whoami", nil, nil, maxResponseBytes, &who); err != nil {
			return "", err
		}
		if who.UserID == "" || len(who.UserID) > maxIDBytes {
			return "", fmt.Errorf("matrix whoami: no user_id in the answer")
		}
		if a.cfg.UserID != "" && a.cfg.UserID != who.UserID {
			return "", fmt.Errorf("matrix %s: access_token belongs to %s, not user_id %s: %w", a.id, who.UserID, a.cfg.UserID, channel.ErrPermanent)
		}
		a.mu.Lock()
		a.self = who.UserID
		a.mu.Unlock()
		return who.UserID, nil
	}
	st := a.st.load(a.log)
	device := a.cfg.DeviceID
	if device == "" {
		device = st.DeviceID
	}
	req := map[string]any{"type": "m.login.password", "password": a.cfg.Password,
		"identifier":                  map[string]any{"type": "m.id.user", "user": a.cfg.UserID},
		"initial_device_display_name": "zeroclaw"}
	if device != "" {
		req["device_id"] = device
	}
	var out struct {
		UserID      string `json:"user_id"`
		AccessToken string `json:"access_token"`
		DeviceID    string `json:"device_id"`
	}
	if _, err := a.call(ctx, "login", http.MethodPost, "/login", nil, req, maxResponseBytes, &out); err != nil {
		return "", err
	}
	if out.AccessToken == "" || out.UserID == "" || len(out.UserID) > maxIDBytes || len(out.DeviceID) > maxIDBytes {
		return "", fmt.Errorf("matrix login: the answer has no access_token or user_id")
	}
	if out.DeviceID != "" && out.DeviceID != st.DeviceID && a.cfg.DeviceID == "" {
		st.DeviceID = out.DeviceID
		if err := a.st.save(st); err != nil {
			a.log.Warn("matrix device id not kept; the next login makes a new device", "error", err)
		}
	}
	a.mu.Lock()
	a.token, a.self = out.AccessToken, out.UserID
	a.mu.Unlock()
	return out.UserID, nil
}

// timelineTypes are the timeline events read: messages, encrypted events (to say they are not read) and
// memberships (the bot's own join marks where a newly joined room's history ends).
var timelineTypes = []string{"m.room.message", "m.room.encrypted", "m.room.member"}

// filter is the inline /sync filter: room messages (and encrypted events, to say they are not read), no
// presence, account data or ephemeral events.
func filter(limit int) string {
	none := map[string]any{"not_types": []string{"*"}}
	f := map[string]any{"presence": none, "account_data": none,
		"room": map[string]any{"ephemeral": none, "account_data": none,
			"state":    map[string]any{"types": []string{"m.room.member"}, "lazy_load_members": true, "limit": 0},
			"timeline": map[string]any{"types": timelineTypes, "limit": limit}}}
	b, _ := json.Marshal(f)
	return string(b)
}

func (a *Adapter) sync(ctx context.Context, since string, timeout time.Duration, self string) (Batch, error) {
	limit := timelineLimit
	if since == "" {
		limit = 1 // a first sync's history is not answered: only its token, summaries and invites are used
	}
	q := url.Values{"filter": {filter(limit)}, "timeout": {strconv.FormatInt(timeout.Milliseconds(), 10)}}
	if since != "" {
		q.Set("since", since)
	}
	// A poll the homeserver leaves hanging past its timeout (plus a grace) is a dead connection: given up, and
	// the run restarts.
	// A first sync (timeout 0) returns the whole account's present state, which a homeserver may take long to
	// build: it gets 2 minutes.
	wait := timeout + min(15*time.Second, max(timeout, 2*time.Second))
	if since == "" {
		wait = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	raw, err := a.call(ctx, "sync", http.MethodGet, "/sync", q, nil, maxSyncBytes, nil)
	if err != nil {
		return Batch{}, err
	}
	b, err := DecodeSync(raw, self)
	if err != nil {
		return Batch{}, fmt.Errorf("matrix sync: not a sync answer: %w", err)
	}
	if b.NextBatch == "" || len(b.NextBatch) > 4096 {
		return Batch{}, fmt.Errorf("matrix sync: the answer has no usable next_batch")
	}
	return b, nil
}

// Run implements channel.Adapter: long polls /sync, joins allowed invites, delivers each message, and writes
// the next token only after every event of the batch was recorded. The first run of an account (no token yet)
// reads the rooms' present state without answering their history.
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	self, err := a.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	d.Progress()
	st := a.st.load(a.log)
	since := st.NextBatch
	if since == "" {
		b, err := a.sync(ctx, "", 0, self)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		d.Progress()
		a.remember(b)
		if err := a.invites(ctx, b); err != nil {
			return a.stop(ctx, err)
		}
		a.log.Info("matrix first sync: the rooms' earlier messages are not answered", "rooms", len(b.Members))
		st.NextBatch = b.NextBatch
		if err := a.st.save(st); err != nil {
			return fmt.Errorf("matrix: keep the sync token: %w", err)
		}
		since = b.NextBatch
	}
	for {
		began := time.Now()
		b, err := a.sync(ctx, since, a.timeout, self)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		d.Progress()
		if len(b.Events) == 0 && len(b.Invites) == 0 && b.NextBatch == since && time.Since(began) < a.timeout/100 {
			// A homeserver that answers a long poll at once with nothing new: do not spin on it.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
		}
		if err := a.handle(ctx, d, b, since, self); err != nil {
			return a.stop(ctx, err)
		}
		if b.NextBatch != since {
			st.NextBatch = b.NextBatch
			if err := a.st.save(st); err != nil {
				return fmt.Errorf("matrix: keep the sync token: %w", err)
			}
			since = b.NextBatch
		}
	}
}

// remember keeps the member counts a batch's room summaries carried.
func (a *Adapter) remember(b Batch) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for room, n := range b.Members {
		if _, known := a.members[room]; known || len(a.members) < maxRoomsCached {
			a.members[room] = n
		}
	}
}

func (a *Adapter) stop(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// handle joins the batch's allowed invites and delivers its messages, in order; an error stops it (the token
// is not advanced, so the homeserver gives the same batch again).
func (a *Adapter) handle(ctx context.Context, d channel.Deliverer, b Batch, since, self string) error {
	a.remember(b)
	if err := a.invites(ctx, b); err != nil {
		return err
	}
	events := b.Events
	if since != "" && len(b.Gaps) > 0 {
		var missed []RoomEvent
		for _, g := range b.Gaps {
			evs, err := a.backfill(ctx, g, since)
			if err != nil {
				return err
			}
			missed = append(missed, evs...)
		}
		events = append(missed, events...) // within a room, the missed events come before its timeline
	}
	// A room the bot joined in this batch comes with its earlier history: only what follows the join is new.
	joinedAt := map[string]int{}
	for i, re := range events {
		if ownJoin(re.Raw, self) {
			joinedAt[re.Room] = i
		}
	}
	for i, re := range events {
		if j, ok := joinedAt[re.Room]; ok && i < j {
			continue
		}
		ev, ok, why := Inbound(re.Room, re.Raw, self)
		if !ok {
			if why == skipEncrypted {
				a.warnEncrypted(re.Room)
			}
			continue
		}
		if a.rooms != nil && !a.rooms[strings.ToLower(re.Room)] {
			continue
		}
		ev.Group = a.group(ctx, re.Room)
		if a.cfg.MentionOnly && ev.Group && ev.Kind == channel.KindMessage && !mentions(re.Raw, self) {
			continue
		}
		if err := d.Deliver(ctx, ev); err != nil {
			return fmt.Errorf("matrix: record event %s: %w", clip(ev.EventID, 64), err)
		}
	}
	return nil
}

// maxBackfill bounds the events read back to fill one room's gap; past it the older ones are not read.
const maxBackfill = 1000

// backfill reads the events a limited timeline left out: /messages backwards from the gap's prev_batch to the
// last sync's token, returned oldest first.
func (a *Adapter) backfill(ctx context.Context, g Gap, since string) ([]RoomEvent, error) {
	if g.PrevBatch == "" || len(g.PrevBatch) > 4096 {
		a.log.Warn("matrix sync timeline was limited without a prev_batch: the room's earlier messages are not read", "room", g.Room)
		return nil, nil
	}
	f, _ := json.Marshal(map[string]any{"types": timelineTypes})
	var out []RoomEvent
	from := g.PrevBatch
	for pages := 0; len(out) < maxBackfill && pages < maxBackfill/10; pages++ { // empty pages count too
		q := url.Values{"dir": {"b"}, "from": {from}, "to": {since}, "limit": {"100"}, "filter": {string(f)}}
		var page struct {
			Chunk []json.RawMessage `json:"chunk"`
			End   string            `json:"end"`
		}
		if _, err := a.call(ctx, "messages", http.MethodGet, "/rooms/"+url.PathEscape(g.Room)+"/messages", q, nil, maxSyncBytes, &page); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && (ae.status == http.StatusForbidden || ae.status == http.StatusNotFound) {
				a.log.Warn("matrix gap not readable: the room's earlier messages are not read", "room", g.Room, "error", err)
				return out, nil
			}
			return nil, err
		}
		for _, raw := range page.Chunk {
			out = append(out, RoomEvent{Room: g.Room, Raw: raw})
		}
		if page.End == "" || page.End == from || len(page.End) > 4096 {
			break
		}
		from = page.End
	}
	if len(out) >= maxBackfill {
		a.log.Warn("matrix gap larger than the backfill bound: its oldest messages are not read", "room", g.Room, "read", len(out))
		out = out[:maxBackfill]
	}
	slices.Reverse(out)
	return out, nil
}

func (a *Adapter) warnEncrypted(room string) {
	a.mu.Lock()
	warned := a.encWarned[room]
	if !warned && len(a.encWarned) < maxRoomsCached {
		a.encWarned[room] = true
	}
	a.mu.Unlock()
	if !warned {
		a.log.Warn("matrix room is end-to-end encrypted; its messages are not read (E2EE is not supported)", "room", room)
	}
}

// group reports a room with more than two joined members (a direct chat has two). Only mention_only needs it
// exactly: then an unknown count is asked of the homeserver; otherwise unknown counts as a group.
func (a *Adapter) group(ctx context.Context, room string) bool {
	a.mu.Lock()
	n, known := a.members[room]
	a.mu.Unlock()
	if !known && a.cfg.MentionOnly {
		var out struct {
			Joined map[string]json.RawMessage `json:"joined"`
		}
		if _, err := a.call(ctx, "joined_members", http.MethodGet, "/rooms/"+url.PathEscape(room)+"/joined_members", nil, nil, maxResponseBytes, &out); err == nil {
			n, known = len(out.Joined), true
			a.mu.Lock()
			if len(a.members) < maxRoomsCached {
				a.members[room] = n
			}
			a.mu.Unlock()
		}
	}
	return !known || n > 2
}

// invites joins the rooms an allowed sender invited the bot to (and allowed_rooms lets in). A join the
// homeserver refuses for good (403, 404) is logged and skipped; any other failure stops the batch.
func (a *Adapter) invites(ctx context.Context, b Batch) error {
	for _, in := range b.Invites {
		if a.rooms != nil && !a.rooms[strings.ToLower(in.Room)] {
			a.log.Info("matrix invite to a room not in allowed_rooms ignored", "room", in.Room, "inviter", in.Inviter)
			continue
		}
		if !a.peers.Allowed(in.Inviter, "") {
			a.log.Warn("matrix invite from a sender not allowed ignored", "room", in.Room, "inviter", in.Inviter)
			continue
		}
		_, err := a.call(ctx, "join", http.MethodPost, "/join/"+url.PathEscape(in.Room), nil, map[string]any{}, maxResponseBytes, nil)
		var ae *apiError
		switch {
		case err == nil:
			a.log.Info("matrix room joined on invite", "room", in.Room, "inviter", in.Inviter)
		case errors.As(err, &ae) && (ae.status == http.StatusForbidden || ae.status == http.StatusNotFound):
			a.log.Warn("matrix invite could not be joined", "room", in.Room, "error", err)
		default:
			return err
		}
	}
	return nil
}

// TxnID is the transaction id of an outbox message: a hash of its durable key, room and text, so a resend after
// a crash reuses it (the homeserver dedupes it) and two different messages never share one, even when a wiped
// sessions.db numbers its outbox from 1 again.
func TxnID(m channel.Outbound) string {
	h := sha256.Sum256([]byte(strconv.Itoa(len(m.Key)) + ":" + m.Key + "\x00" + m.ReplyTarget + "\x00" + m.Text))
	return "zc" + hex.EncodeToString(h[:16])
}

func randomTxn() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "zcr" + hex.EncodeToString(b[:])
}

// content is an m.room.message event's content answering replyTo (an inbound MessageID, "<event>[|<root>]").
func (a *Adapter) content(msgtype, text, replyTo string) map[string]any {
	c := map[string]any{"msgtype": msgtype, "body": text}
	if replyTo == "" {
		return c
	}
	ev, root, _ := strings.Cut(replyTo, "|")
	inReply := map[string]any{"event_id": ev}
	switch {
	case root != "":
		c["m.relates_to"] = map[string]any{"rel_type": "m.thread", "event_id": root, "is_falling_back": true, "m.in_reply_to": inReply}
	case a.cfg.ReplyInThread:
		c["m.relates_to"] = map[string]any{"rel_type": "m.thread", "event_id": ev, "is_falling_back": true, "m.in_reply_to": inReply}
	default:
		c["m.relates_to"] = map[string]any{"m.in_reply_to": inReply}
	}
	return c
}

func (a *Adapter) put(ctx context.Context, room, txn string, content map[string]any) (channel.Sent, error) {
	if !validID(room) {
		return channel.Sent{}, fmt.Errorf("matrix send: %q is not a room id: %w", clip(room, 64), channel.ErrPermanent)
	}
	if _, err := a.session(ctx); err != nil {
		return channel.Sent{}, err
	}
	room, err := a.resolve(ctx, room)
	if err != nil {
		return channel.Sent{}, err
	}
	var out struct {
		EventID string `json:"event_id"`
	}
	path := "/rooms/" + url.PathEscape(room) + "/send/m.room.message/" + url.PathEscape(txn)
	if _, err := a.call(ctx, "send", http.MethodPut, path, nil, content, maxResponseBytes, &out); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: clip(out.EventID, maxIDBytes)}, nil
}

// resolve turns a room alias (#name:server, as a notice's target may name a room) into its room id, once per
// alias; a room id is returned as it is. An alias the homeserver does not know is a permanent failure.
func (a *Adapter) resolve(ctx context.Context, room string) (string, error) {
	if !strings.HasPrefix(room, "#") {
		return room, nil
	}
	a.mu.Lock()
	id, ok := a.aliases[room]
	a.mu.Unlock()
	if ok {
		return id, nil
	}
	var out struct {
		RoomID string `json:"room_id"`
	}
	if _, err := a.call(ctx, "directory", http.MethodGet, "/directory/room/"+url.PathEscape(room), nil, nil, maxResponseBytes, &out); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			return "", fmt.Errorf("%w: %w", err, channel.ErrPermanent)
		}
		return "", err
	}
	if !validID(out.RoomID) || !strings.HasPrefix(out.RoomID, "!") {
		return "", fmt.Errorf("matrix directory: %s resolved to no room id", clip(room, 64))
	}
	a.mu.Lock()
	if len(a.aliases) < maxRoomsCached {
		a.aliases[room] = out.RoomID
	}
	a.mu.Unlock()
	return out.RoomID, nil
}

// Send implements channel.Adapter: plain text (no HTML: a model's markup is shown as written), as a reply to
// the message it answers, with the outbox key's transaction id.
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	return a.put(ctx, m.ReplyTarget, TxnID(m), a.content("m.text", m.Text, m.ReplyTo))
}

// WasSent implements channel.SentChecker, for a reply a crash cut between its send and its record: the bot's
// recent messages in the room are looked up for its transaction id (the homeserver shows it to the device that
// sent it, in unsigned.transaction_id). Not among them, it is sent now with that same transaction id (were it
// on the homeserver after all, the homeserver dedupes it), so it counts as sent without going back to the
// outbox, where cut attempts would count against its retry budget; if that send fails it goes back to the
// outbox (false, nil) and is resent there with the same id. Only when the lookup itself fails is the answer an
// error (the core then reports the reply unconfirmed): past the homeserver's memory of transaction ids a blind
// resend could show it twice.
func (a *Adapter) WasSent(ctx context.Context, m channel.Outbound) (bool, channel.Sent, error) {
	if !validID(m.ReplyTarget) {
		return false, channel.Sent{}, nil
	}
	self, err := a.session(ctx)
	if err != nil {
		return false, channel.Sent{}, err
	}
	room, err := a.resolve(ctx, m.ReplyTarget)
	if err != nil {
		return false, channel.Sent{}, err
	}
	f, _ := json.Marshal(map[string]any{"types": []string{"m.room.message"}, "senders": []string{self}})
	q := url.Values{"dir": {"b"}, "limit": {"100"}, "filter": {string(f)}}
	var out struct {
		Chunk []json.RawMessage `json:"chunk"`
	}
	if _, err := a.call(ctx, "messages", http.MethodGet, "/rooms/"+url.PathEscape(room)+"/messages", q, nil, maxSyncBytes, &out); err != nil {
		return false, channel.Sent{}, err
	}
	txn := TxnID(m)
	for _, raw := range out.Chunk {
		var e roomEvent
		if json.Unmarshal(raw, &e) == nil && e.Unsigned.TransactionID == txn && e.Sender == self && validID(e.EventID) {
			return true, channel.Sent{MessageID: e.EventID}, nil
		}
	}
	s, err := a.Send(ctx, m)
	if err != nil {
		return false, channel.Sent{}, nil
	}
	return true, s, nil
}

// Typing implements channel.Typer (10 s, renewed by the core every few seconds while the turn runs).
func (a *Adapter) Typing(ctx context.Context, room, _ string) error {
	self, err := a.session(ctx)
	if err != nil || !validID(room) {
		return err
	}
	_, err = a.call(ctx, "typing", http.MethodPut, "/rooms/"+url.PathEscape(room)+"/typing/"+url.PathEscape(self), nil,
		map[string]any{"typing": true, "timeout": 10000}, maxResponseBytes, nil)
	return err
}

// Prompt implements channel.Prompter: the question, asking for a reply naming the token.
func (a *Adapter) Prompt(ctx context.Context, p channel.ApprovalPrompt) (channel.Sent, error) {
	text := p.Text + "\nReply \"yes " + p.Token + "\" to run it once or \"no " + p.Token + "\" to refuse."
	return a.put(ctx, p.ReplyTarget, randomTxn(), a.content("m.text", text, ""))
}

// AckApproval implements channel.Prompter: the notice, as an m.notice in the room the answer came from.
func (a *Adapter) AckApproval(ctx context.Context, ans channel.ApprovalAnswer, notice string) error {
	if ans.AckID == "" || notice == "" {
		return nil
	}
	_, err := a.put(ctx, ans.AckID, randomTxn(), a.content("m.notice", notice, ""))
	return err
}

// SyncToken is the token the next sync starts from ("" : none kept yet).
func (a *Adapter) SyncToken() string { return a.st.load(a.log).NextBatch }
