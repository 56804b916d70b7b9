// Package slackfake is a loopback Slack for tests: the Web API's wire (POST /api/<method> with a Bearer token,
// JSON or form bodies, {"ok":...} answers, 429 with a Retry-After header) and Socket Mode's (apps.connections.open
// answers a ws:// url; the socket sends hello, events_api and interactive envelopes, disconnect; each envelope
// is acknowledged by {"envelope_id"}). It keeps every conversation's history (conversations.history /
// conversations.replies with metadata), records what it was sent and which envelopes were acknowledged, and
// can redeliver envelopes, inject 429/5xx/hangs per method, and drop, hang or refresh the socket.
package slackfake

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Fault is one injected failure of a method's next call.
type Fault struct {
	Status     int    // 429, 500, 502... (0 with Error: a 200 {"ok":false,"error":Error})
	RetryAfter int    // seconds, for 429 (the Retry-After header)
	Error      string // invalid_auth, token_revoked, ...
	Hang       bool
	// URL, for apps.connections.open: an ok answer naming this socket url (one that does not answer, say).
	URL string
}

// Message is one message in a conversation: a person's (SendText) or one chat.postMessage accepted.
type Message struct {
	Channel, TS, ThreadTS, User, Text string
	Bot                               bool
	Buttons                           []Button
	// MetadataType and MetadataKey are the message metadata's event_type and event_payload.key.
	MetadataType, MetadataKey string
}

// Button is one button of a sent message's actions block.
type Button struct{ Text, ActionID, Value string }

// Ephemeral is one chat.postEphemeral.
type Ephemeral struct{ Channel, User, Text string }

type event struct {
	key      string // msg:<channel>:<ts> or act:...: what the adapter dedupes on
	typ      string // events_api, interactive
	payload  json.RawMessage
	acked    bool
	attempts int
}

type conn struct {
	c      *websocket.Conn
	out    chan []byte
	cancel context.CancelFunc
	hang   chan struct{} // closed: stop reading and writing (pings go unanswered)
}

// Server is the fake Slack.
type Server struct {
	BotToken, AppToken, BotUser string
	srv                         *httptest.Server

	mu          sync.Mutex
	clock       int64 // ts counter
	history     map[string][]Message
	sent        []Message
	ephemerals  []Ephemeral
	events      []*event
	envelopes   map[string]*event // envelope_id → event
	nextEnv     int
	acks        int
	strayAcks   int
	tickets     map[string]bool
	nextTicket  int
	cur         *conn
	hung        []*conn
	connections int
	faults      map[string][]Fault
	calls       map[string]int
}

// Start runs a fake for the two tokens on a loopback port; Close stops it. BotUser is the bot's user id.
func Start(botToken, appToken string) *Server {
	s := &Server{BotToken: botToken, AppToken: appToken, BotUser: "UBOT0001", clock: 1700000000_000100,
		history: map[string][]Message{}, envelopes: map[string]*event{}, tickets: map[string]bool{},
		faults: map[string][]Fault{}, calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the api_base_url to configure.
func (s *Server) URL() string { return s.srv.URL + "/api" }

// Close stops the server (a hanging request or socket is released).
func (s *Server) Close() {
	s.mu.Lock()
	if s.cur != nil {
		s.cur.cancel()
	}
	for _, h := range s.hung {
		h.cancel()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Inject queues faults for method's next calls, in order.
func (s *Server) Inject(method string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f...)
}

// ClearFaults drops every fault not yet used.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[string][]Fault{}
}

func (s *Server) ts() string {
	s.clock += 100
	return fmt.Sprintf("%d.%06d", s.clock/1_000_000, s.clock%1_000_000)
}

// SendText posts a person's message in channel (D...: a direct message; else a channel) and sends its
// message event; thread is the thread it is in ("" : top level). It returns the message's ts.
func (s *Server) SendText(channel, user, text, thread string) string {
	return s.send(channel, user, text, thread, false)
}

// SendMention is SendText of a message that mentions the bot, sent as Slack does when the app subscribes to
// both: a message event and an app_mention event (two event_ids) for the one message.
func (s *Server) SendMention(channel, user, text string) string {
	return s.send(channel, user, "<@"+s.BotUser+"> "+text, "", true)
}

func (s *Server) send(channel, user, text, thread string, mention bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.ts()
	s.history[channel] = append(s.history[channel], Message{Channel: channel, TS: ts, ThreadTS: thread, User: user, Text: text})
	ctype := "channel"
	if strings.HasPrefix(channel, "D") {
		ctype = "im"
	}
	types := []string{"message"}
	if mention {
		types = append(types, "app_mention")
	}
	for _, typ := range types {
		ev := map[string]any{"type": typ, "channel": channel, "user": user, "text": text, "ts": ts,
			"channel_type": ctype, "event_ts": ts, "client_msg_id": "cm-" + ts}
		if thread != "" {
			ev["thread_ts"] = thread
		}
		if typ == "app_mention" {
			delete(ev, "channel_type")
		}
		payload, _ := json.Marshal(map[string]any{"token": "verification", "team_id": "T0001", "api_app_id": "A0001",
			"event": ev, "type": "event_callback", "event_id": fmt.Sprintf("Ev%04d", len(s.events)+1), "event_time": s.clock / 1_000_000})
		s.queue(&event{key: "msg:" + channel + ":" + ts, typ: "events_api", payload: payload})
	}
	return ts
}

// Press sends user's press of the button with value on the message at messageTS in channel.
func (s *Server) Press(user, channel, messageTS, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ats := s.ts()
	var threadTS string
	for _, m := range s.history[channel] {
		if m.TS == messageTS {
			threadTS = m.ThreadTS
		}
	}
	container := map[string]any{"type": "message", "message_ts": messageTS, "channel_id": channel, "is_ephemeral": false}
	if threadTS != "" {
		container["thread_ts"] = threadTS
	}
	payload, _ := json.Marshal(map[string]any{"type": "block_actions",
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "team_id": "T0001"},
		"api_app_id": "A0001", "container": container, "channel": map[string]any{"id": channel, "name": "c"},
		"trigger_id": "tr" + ats, "response_url": "https://hooks.slack.invalid/actions/x",
		"actions": []any{map[string]any{"action_id": "zc_approve", "block_id": "zc_approval", "type": "button", "value": value, "action_ts": ats}}})
	s.queue(&event{key: "act:" + channel + ":" + messageTS + ":" + user + ":" + ats, typ: "interactive", payload: payload})
}

// queue adds ev and sends it on the socket if one is open. s.mu held.
func (s *Server) queue(ev *event) {
	s.events = append(s.events, ev)
	if s.cur != nil {
		s.push(s.cur, ev)
	}
}

// push sends ev in a fresh envelope on c. s.mu held.
func (s *Server) push(c *conn, ev *event) {
	s.nextEnv++
	id := fmt.Sprintf("env-%06d", s.nextEnv)
	s.envelopes[id] = ev
	reason := ""
	if ev.attempts > 0 {
		reason = "timeout"
	}
	raw, _ := json.Marshal(map[string]any{"envelope_id": id, "payload": ev.payload, "type": ev.typ,
		"accepts_response_payload": false, "retry_attempt": ev.attempts, "retry_reason": reason})
	ev.attempts++
	select {
	case c.out <- raw:
	default: // a socket that stopped reading: the envelope stays unacknowledged and comes again
	}
}

// Redeliver sends every event again, acknowledged or not, on the open socket (Slack's retry of an envelope
// whose acknowledgement it did not see in time).
func (s *Server) Redeliver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return
	}
	for _, ev := range s.events {
		s.push(s.cur, ev)
	}
}

// Disconnect sends a disconnect envelope (reason refresh_requested, warning, link_disabled) on the open socket.
func (s *Server) Disconnect(reason string) {
	raw, _ := json.Marshal(map[string]any{"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-fake"}})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		select {
		case s.cur.out <- raw:
		default:
		}
	}
}

// SendRaw sends frame as it is on the open socket (a hostile or broken edge); false when none is open.
func (s *Server) SendRaw(frame []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return false
	}
	select {
	case s.cur.out <- frame:
		return true
	default:
		return false
	}
}

// DropSocket closes the open socket without a close frame.
func (s *Server) DropSocket() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.cancel()
		s.cur = nil
	}
}

// HangSocket makes the open socket stop reading and writing: pings go unanswered.
func (s *Server) HangSocket() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		close(s.cur.hang)
		s.hung = append(s.hung, s.cur)
		s.cur = nil
	}
}

// Sent is every chat.postMessage accepted so far.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// Ephemerals is every chat.postEphemeral so far.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// Unacked counts events no envelope of which was acknowledged.
func (s *Server) Unacked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ev := range s.events {
		if !ev.acked {
			n++
		}
	}
	return n
}

// Acks counts acknowledgements of known envelopes; StrayAcks of unknown ones.
func (s *Server) Acks() (known, stray int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acks, s.strayAcks
}

// Connections counts Socket Mode connections accepted; Calls a Web API method's calls.
func (s *Server) Connections() int        { s.mu.Lock(); defer s.mu.Unlock(); return s.connections }
func (s *Server) Calls(method string) int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls[method] }
func (s *Server) Connected() bool         { s.mu.Lock(); defer s.mu.Unlock(); return s.cur != nil }
func (s *Server) History(ch string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.history[ch]...)
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string) { reply(w, map[string]any{"ok": false, "error": code}) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/socket" {
		s.socket(w, r)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	p := map[string]any{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if json.Unmarshal(raw, &p) != nil {
			fail(w, "invalid_json")
			return
		}
	} else {
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			fail(w, "invalid_form_data")
			return
		}
		for k := range form {
			p[k] = form.Get(k)
		}
	}
	s.mu.Lock()
	s.calls[method]++
	var f *Fault
	if q := s.faults[method]; len(q) > 0 {
		f = &q[0]
		s.faults[method] = q[1:]
	}
	s.mu.Unlock()
	if f != nil {
		switch {
		case f.Hang:
			<-r.Context().Done()
			return
		case f.Status == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
			w.WriteHeader(http.StatusTooManyRequests)
			reply(w, map[string]any{"ok": false, "error": "ratelimited"})
			return
		case f.URL != "":
			reply(w, map[string]any{"ok": true, "url": f.URL})
			return
		case f.Status != 0:
			w.WriteHeader(f.Status)
			_, _ = io.WriteString(w, "upstream connect error")
			return
		default:
			fail(w, f.Error)
			return
		}
	}
	auth, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if method == "apps.connections.open" {
		switch auth {
		case s.AppToken:
		case s.BotToken:
			fail(w, "not_allowed_token_type")
			return
		default:
			fail(w, "invalid_auth")
			return
		}
		s.mu.Lock()
		s.nextTicket++
		t := "tk" + strconv.Itoa(s.nextTicket)
		s.tickets[t] = true
		s.mu.Unlock()
		reply(w, map[string]any{"ok": true, "url": "ws://" + r.Host + "/socket?ticket=" + t})
		return
	}
	if auth != s.BotToken {
		fail(w, "invalid_auth")
		return
	}
	switch method {
	case "auth.test":
		reply(w, map[string]any{"ok": true, "url": "https://fake.slack.invalid/", "team": "Fake", "user": "zeroclaw",
			"team_id": "T0001", "user_id": s.BotUser, "bot_id": "B0001"})
	case "chat.postMessage":
		s.postMessage(w, p)
	case "chat.postEphemeral":
		ch, _ := p["channel"].(string)
		user, _ := p["user"].(string)
		text, _ := p["text"].(string)
		if ch == "" || user == "" {
			fail(w, "invalid_arguments")
			return
		}
		s.mu.Lock()
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: ch, User: user, Text: text})
		ts := s.ts()
		s.mu.Unlock()
		reply(w, map[string]any{"ok": true, "message_ts": ts})
	case "conversations.history", "conversations.replies":
		s.read(w, method, p)
	default:
		fail(w, "unknown_method")
	}
}

func (s *Server) postMessage(w http.ResponseWriter, p map[string]any) {
	ch, _ := p["channel"].(string)
	text, _ := p["text"].(string)
	thread, _ := p["thread_ts"].(string)
	blocks, _ := p["blocks"].([]any)
	switch {
	case ch == "":
		fail(w, "channel_not_found")
		return
	case text == "" && len(blocks) == 0:
		fail(w, "no_text")
		return
	case len([]rune(text)) > 40000:
		fail(w, "msg_too_long")
		return
	}
	m := Message{Channel: ch, ThreadTS: thread, Text: text, Bot: true, User: s.BotUser}
	if md, ok := p["metadata"].(map[string]any); ok {
		m.MetadataType, _ = md["event_type"].(string)
		pl, _ := md["event_payload"].(map[string]any)
		m.MetadataKey, _ = pl["key"].(string)
		if m.MetadataType == "" || pl == nil {
			fail(w, "invalid_metadata_format")
			return
		}
	}
	for _, b := range blocks {
		blk, _ := b.(map[string]any)
		if blk["type"] != "actions" {
			continue
		}
		els, _ := blk["elements"].([]any)
		for _, e := range els {
			el, _ := e.(map[string]any)
			txt, _ := el["text"].(map[string]any)
			label, _ := txt["text"].(string)
			id, _ := el["action_id"].(string)
			val, _ := el["value"].(string)
			m.Buttons = append(m.Buttons, Button{Text: label, ActionID: id, Value: val})
		}
	}
	s.mu.Lock()
	m.TS = s.ts()
	s.sent = append(s.sent, m)
	s.history[ch] = append(s.history[ch], m)
	s.mu.Unlock()
	reply(w, map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": map[string]any{"type": "message",
		"text": text, "user": s.BotUser, "bot_id": "B0001", "ts": m.TS}})
}

func tsNum(ts string) float64 { f, _ := strconv.ParseFloat(ts, 64); return f }

// read serves conversations.history (newest first, after oldest) and conversations.replies (the thread of ts,
// oldest first), paged by limit and an opaque cursor; metadata only with include_all_metadata.
func (s *Server) read(w http.ResponseWriter, method string, p map[string]any) {
	ch, _ := p["channel"].(string)
	oldest, _ := p["oldest"].(string)
	cursor, _ := p["cursor"].(string)
	withMeta := p["include_all_metadata"] == "true"
	limit, _ := strconv.Atoi(fmt.Sprint(p["limit"]))
	if limit <= 0 || limit > 999 {
		limit = 100
	}
	s.mu.Lock()
	msgs, ok := s.history[ch]
	msgs = append([]Message(nil), msgs...)
	s.mu.Unlock()
	if !ok {
		fail(w, "channel_not_found")
		return
	}
	var sel []Message
	root, _ := p["ts"].(string)
	for _, m := range msgs {
		if oldest != "" && tsNum(m.TS) <= tsNum(oldest) && !(method == "conversations.replies" && m.TS == root) {
			continue
		}
		if method == "conversations.replies" && m.TS != root && m.ThreadTS != root {
			continue
		}
		sel = append(sel, m)
	}
	if method == "conversations.history" {
		sort.Slice(sel, func(i, j int) bool { return tsNum(sel[i].TS) > tsNum(sel[j].TS) })
	}
	from, _ := strconv.Atoi(strings.TrimPrefix(cursor, "c:"))
	if from < 0 || from > len(sel) {
		from = len(sel)
	}
	to := min(from+limit, len(sel))
	out := []any{}
	for _, m := range sel[from:to] {
		o := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User}
		if m.ThreadTS != "" {
			o["thread_ts"] = m.ThreadTS
		}
		if m.Bot {
			o["bot_id"] = "B0001"
		}
		if withMeta && m.MetadataType != "" {
			o["metadata"] = map[string]any{"event_type": m.MetadataType, "event_payload": map[string]any{"key": m.MetadataKey}}
		}
		out = append(out, o)
	}
	next := ""
	if to < len(sel) {
		next = "c:" + strconv.Itoa(to)
	}
	reply(w, map[string]any{"ok": true, "messages": out, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next}})
}

// socket serves one Socket Mode connection: hello, then every unacknowledged event (again, as a retry, if it
// was sent before), then new events as they come; acknowledgements are read as they arrive.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	t := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[t]
	delete(s.tickets, t)
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cn := &conn{out: make(chan []byte, 4096), cancel: cancel, hang: make(chan struct{})}
	c, err := websocket.Accept(&hijackWrap{ResponseWriter: w, hang: cn.hang, done: ctx.Done()}, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	cn.c = c
	hello, _ := json.Marshal(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "applink-fake", "approximate_connection_time": 3600},
		"connection_info": map[string]any{"app_id": "A0001"}})
	s.mu.Lock()
	if s.cur != nil {
		s.cur.cancel() // one socket at a time: the newest wins
	}
	for _, h := range s.hung { // Slack gives up on a socket that went silent once its client is back
		h.cancel()
	}
	s.hung = nil
	s.cur = cn
	s.connections++
	cn.out <- hello
	for _, ev := range s.events {
		if !ev.acked {
			s.push(cn, ev)
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.cur == cn {
			s.cur = nil
		}
		s.mu.Unlock()
	}()
	go func() { // reader: acknowledgements
		defer cancel()
		for {
			select {
			case <-cn.hang:
				<-ctx.Done()
				return
			default:
			}
			_, raw, err := c.Read(ctx)
			if err != nil {
				return
			}
			select {
			case <-cn.hang: // a hung socket takes nothing in
				<-ctx.Done()
				return
			default:
			}
			var ack struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(raw, &ack) != nil || ack.EnvelopeID == "" {
				continue
			}
			s.mu.Lock()
			if ev := s.envelopes[ack.EnvelopeID]; ev != nil {
				ev.acked = true
				s.acks++
			} else {
				s.strayAcks++
			}
			s.mu.Unlock()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-cn.hang:
			<-ctx.Done()
			return
		case raw := <-cn.out:
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			err := c.Write(wctx, websocket.MessageText, raw)
			wcancel()
			if err != nil {
				return
			}
		}
	}
}

// hijackWrap hands the WebSocket a connection whose writes block once the socket hangs: it then answers no
// ping, as a silent Slack edge would.
type hijackWrap struct {
	http.ResponseWriter
	hang, done <-chan struct{}
}

func (h *hijackWrap) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	buffered, _ := brw.Reader.Peek(brw.Reader.Buffered())
	hc := &hangConn{Conn: nc, hang: h.hang, done: h.done}
	rd := io.MultiReader(strings.NewReader(string(buffered)), hc)
	return hc, bufio.NewReadWriter(bufio.NewReader(rd), bufio.NewWriter(hc)), nil
}

type hangConn struct {
	net.Conn
	hang, done <-chan struct{}
}

func (c *hangConn) Write(p []byte) (int, error) {
	select {
	case <-c.hang:
		select {
		case <-c.done:
		case <-time.After(time.Minute):
		}
		return 0, net.ErrClosed
	default:
	}
	return c.Conn.Write(p)
}
