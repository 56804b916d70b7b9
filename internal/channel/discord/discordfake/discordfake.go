// Package discordfake is a loopback Discord for tests: REST v10 (GET /api/v10/gateway/bot, POST
// /channels/{id}/messages with nonce/enforce_nonce, GET /channels/{id}/messages with after/before/limit (each
// channel's history, users' messages and the bot's, newest first and without guild_id as REST answers), POST /channels/{id}/typing, POST
// /interactions/{id}/{token}/callback, {"code","message"} errors, 429 with retry_after and X-RateLimit headers)
// and the Gateway WebSocket v10 (HELLO, heartbeats and ACKs, IDENTIFY → READY, RESUME → replay → RESUMED,
// RECONNECT, INVALID_SESSION, close codes), with its own record of what it was sent. Sessions stay resumable
// while nobody is connected (events sent meanwhile are replayed on RESUME, as Discord does for a while), until a
// test invalidates them. Faults can be injected: REST 429/5xx/hangs per route, silenced heartbeat ACKs, dropped
// connections, RECONNECT, INVALID_SESSION, close codes, and the redelivery of a session's events from the first.
package discordfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Fault is one injected failure of a REST route's next call.
type Fault struct {
	Status     int     // 429, 500, 502...
	RetryAfter float64 // seconds, for 429
	Hang       bool
}

// Button is a component button of a sent message.
type Button struct{ Label, CustomID string }

// Message is one message the fake created (answered 200).
type Message struct {
	ID, ChannelID, Content, Nonce, ReplyTo string
	Buttons                                []Button
	// AllowedMentionsNone reports allowed_mentions {"parse": []}.
	AllowedMentionsNone bool
}

// Callback is one interaction response the fake accepted.
type Callback struct {
	InteractionID string
	Type          int
	Content       string
	Ephemeral     bool
}

// Server is the fake Discord.
type Server struct {
	Token string
	BotID string
	// HeartbeatMs is the heartbeat_interval HELLO announces.
	HeartbeatMs int64
	srv         *httptest.Server

	mu           sync.Mutex
	next         int64 // snowflake counter
	sessions     map[string]*session
	sent         []Message
	byNonce      map[string]Message
	callbacks    []Callback
	interactions map[string]string // id → token, of interactions dispatched
	answered     map[string]bool
	typing       int
	identifies   int
	resumes      int
	faults       map[string][]Fault
	noAcks       bool
	closeNext    int // a close code sent to the next IDENTIFY/RESUME instead of READY/RESUMED
	lastIntents  int64
	heartbeats   int
	history      map[string][]map[string]any // channel → its messages, oldest first (REST shape)
	lists        []string                    // the query of every GET /channels/{id}/messages, "<id>?<query>"
}

type session struct {
	id      string
	events  [][]byte // dispatch frames without s; seq = index+1
	conn    *wsConn  // attached connection, nil: none
	valid   bool
	replay0 bool // the next RESUME replays from the first event
}

type wsConn struct {
	c      *websocket.Conn
	wake   chan struct{}
	cursor int // events sent on this connection
	sess   *session
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // serialises writes
}

// Start runs a fake for token on a loopback port; Close stops it.
func Start(token string) *Server {
	s := &Server{Token: token, BotID: "900000000000000001", HeartbeatMs: 41250, next: 1100000000000000000,
		sessions: map[string]*session{}, byNonce: map[string]Message{}, interactions: map[string]string{},
		answered: map[string]bool{}, faults: map[string][]Fault{}, history: map[string][]map[string]any{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the api_base_url to configure.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server (a hanging request and every connection are released).
func (s *Server) Close() {
	s.mu.Lock()
	for _, se := range s.sessions {
		if se.conn != nil {
			se.conn.cancel()
		}
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

func (s *Server) snowflake() string {
	s.next++
	return strconv.FormatInt(s.next, 10)
}

// Inject queues faults for a REST route's next calls, in order. Routes: "gateway/bot", "messages" (POST),
// "messages/list" (GET), "typing", "callback".
func (s *Server) Inject(route string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], f...)
}

// dispatch appends an event to every valid session and wakes their connections.
func (s *Server) dispatch(t string, d any) {
	raw, _ := json.Marshal(map[string]any{"op": 0, "t": t, "d": d})
	for _, se := range s.sessions {
		if !se.valid {
			continue
		}
		se.events = append(se.events, raw)
		if se.conn != nil {
			wake(se.conn)
		}
	}
}

func wake(c *wsConn) {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// SendText posts a message by user in channel (guild "": a DM) and returns its id.
func (s *Server) SendText(userID, username, channelID, guildID, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.snowflake()
	m := map[string]any{"id": id, "channel_id": channelID, "type": 0, "content": text,
		"author":    map[string]any{"id": userID, "username": username, "bot": false},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "mentions": []any{}}
	s.history[channelID] = append(s.history[channelID], maps.Clone(m)) // REST objects carry no guild_id
	if guildID != "" {
		m["guild_id"] = guildID
	}
	s.dispatch("MESSAGE_CREATE", m)
	return id
}

// Invalidate ends every session (a RESUME is then answered INVALID_SESSION false, and events sent meanwhile
// are in no session: only the channels' history has them) and drops the connections.
func (s *Server) Invalidate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range s.sessions {
		se.valid = false
		if se.conn != nil {
			se.conn.cancel()
		}
	}
}

// Lists is the "<channel>?<query>" of every GET /channels/{id}/messages the fake answered, in order.
func (s *Server) Lists() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lists...)
}

// Dispatch sends any event (t, d) to the sessions, for tests of odd shapes.
func (s *Server) Dispatch(t string, d any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dispatch(t, d)
}

// Press is user's press of a button carrying customID on a message in channel; it returns the interaction id.
func (s *Server) Press(userID, channelID, customID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.snowflake()
	tok := "aW50ZXJhY3Rpb246" + id
	s.interactions[id] = tok
	s.dispatch("INTERACTION_CREATE", map[string]any{"id": id, "application_id": s.BotID, "type": 3, "token": tok,
		"version": 1, "channel_id": channelID, "user": map[string]any{"id": userID, "username": "u" + userID},
		"data": map[string]any{"custom_id": customID, "component_type": 2}, "message": map[string]any{"id": "1"}})
	return id
}

// Redeliver makes every session's next RESUME replay its events from the first, and drops the connections
// (a resume follows).
func (s *Server) Redeliver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range s.sessions {
		se.replay0 = true
		if se.conn != nil {
			se.conn.cancel()
		}
	}
}

// Drop closes every connection abruptly (no close frame).
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range s.sessions {
		if se.conn != nil {
			se.conn.cancel()
		}
	}
}

// CloseWith closes every connection with code (4004: authentication failed, 4014: disallowed intents, 4000).
func (s *Server) CloseWith(code int) {
	s.mu.Lock()
	var cs []*wsConn
	for _, se := range s.sessions {
		if se.conn != nil {
			cs = append(cs, se.conn)
		}
	}
	s.mu.Unlock()
	for _, c := range cs {
		_ = c.c.Close(websocket.StatusCode(code), "closed by the test")
	}
}

// CloseNextWith answers the next IDENTIFY or RESUME by closing with code.
func (s *Server) CloseNextWith(code int) { s.mu.Lock(); s.closeNext = code; s.mu.Unlock() }

// SendOp sends a bare opcode (7 RECONNECT, 9 INVALID_SESSION with d, 1 HEARTBEAT request) to every connection.
func (s *Server) SendOp(op int, d any) {
	s.mu.Lock()
	var cs []*wsConn
	for _, se := range s.sessions {
		if se.conn != nil {
			cs = append(cs, se.conn)
			if op == 9 && d == false {
				se.valid = false
			}
		}
	}
	s.mu.Unlock()
	for _, c := range cs {
		_ = c.send(map[string]any{"op": op, "d": d})
	}
}

// SilenceAcks stops (true) or resumes heartbeat ACKs: a zombie connection.
func (s *Server) SilenceAcks(on bool) { s.mu.Lock(); s.noAcks = on; s.mu.Unlock() }

// Sent is every message created so far (a nonce-deduplicated resend is not a new one).
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// Callbacks is every interaction response so far.
func (s *Server) Callbacks() []Callback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Callback(nil), s.callbacks...)
}

// Counters.
func (s *Server) Typing() int        { s.mu.Lock(); defer s.mu.Unlock(); return s.typing }
func (s *Server) Identifies() int    { s.mu.Lock(); defer s.mu.Unlock(); return s.identifies }
func (s *Server) Resumes() int       { s.mu.Lock(); defer s.mu.Unlock(); return s.resumes }
func (s *Server) Heartbeats() int    { s.mu.Lock(); defer s.mu.Unlock(); return s.heartbeats }
func (s *Server) LastIntents() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.lastIntents }
func (s *Server) Connected() int     { s.mu.Lock(); defer s.mu.Unlock(); return s.connected() }
func (s *Server) connected() (n int) {
	for _, se := range s.sessions {
		if se.conn != nil {
			n++
		}
	}
	return n
}

// Caught reports whether a connection is attached and has received every event of its session.
func (s *Server) Caught() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range s.sessions {
		if se.conn != nil && se.valid && se.conn.cursor == len(se.events) {
			return true
		}
	}
	return false
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-RateLimit-Limit", "5")
	w.Header().Set("X-RateLimit-Remaining", "4")
	w.Header().Set("X-RateLimit-Reset-After", "1.0")
	w.Header().Set("X-RateLimit-Bucket", "fakebucket")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func fail(w http.ResponseWriter, status, code int, msg string) {
	reply(w, status, map[string]any{"code": code, "message": msg})
}

func (s *Server) fault(route string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.faults[route]; len(q) > 0 {
		s.faults[route] = q[1:]
		return &q[0]
	}
	return nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/gateway" || r.URL.Path == "/resume" {
		s.gateway(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v10/")
	if !ok {
		fail(w, 404, 0, "404: Not Found")
		return
	}
	parts := strings.Split(rest, "/")
	route := ""
	switch {
	case rest == "gateway/bot" && r.Method == http.MethodGet:
		route = "gateway/bot"
	case len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages" && r.Method == http.MethodPost:
		route = "messages"
	case len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages" && r.Method == http.MethodGet:
		route = "messages/list"
	case len(parts) == 3 && parts[0] == "channels" && parts[2] == "typing" && r.Method == http.MethodPost:
		route = "typing"
	case len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback" && r.Method == http.MethodPost:
		route = "callback"
	default:
		fail(w, 404, 0, "404: Not Found")
		return
	}
	if route != "callback" && r.Header.Get("Authorization") != "Bot "+s.Token {
		fail(w, 401, 0, "401: Unauthorized")
		return
	}
	if f := s.fault(route); f != nil {
		switch {
		case f.Hang:
			<-r.Context().Done()
			return
		case f.Status == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter+0.999)))
			w.Header().Set("X-RateLimit-Scope", "user")
			reply(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": f.RetryAfter, "global": false})
			return
		default:
			fail(w, f.Status, 0, http.StatusText(f.Status))
			return
		}
	}
	var body map[string]any
	if r.Method == http.MethodPost {
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if len(raw) > 0 && json.Unmarshal(raw, &body) != nil {
			fail(w, 400, 50109, "The request body contains invalid JSON.")
			return
		}
	}
	switch route {
	case "gateway/bot":
		reply(w, 200, map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gateway", "shards": 1,
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}})
	case "messages":
		s.createMessage(w, parts[1], body)
	case "messages/list":
		s.listMessages(w, parts[1], r.URL.Query())
	case "typing":
		s.mu.Lock()
		s.typing++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "callback":
		s.callback(w, parts[1], parts[2], body)
	}
}

func (s *Server) createMessage(w http.ResponseWriter, channelID string, p map[string]any) {
	content, _ := p["content"].(string)
	comps, _ := p["components"].([]any)
	if content == "" && len(comps) == 0 {
		fail(w, 400, 50006, "Cannot send an empty message")
		return
	}
	if len([]rune(content)) > 2000 {
		fail(w, 400, 50035, "Invalid Form Body (content: Must be 2000 or fewer in length.)")
		return
	}
	m := Message{ChannelID: channelID, Content: content}
	switch n := p["nonce"].(type) {
	case string:
		m.Nonce = n
	case float64:
		m.Nonce = strconv.FormatInt(int64(n), 10)
	}
	if len(m.Nonce) > 25 {
		fail(w, 400, 50035, "Invalid Form Body (nonce: Must be 25 or fewer in length.)")
		return
	}
	if ref, ok := p["message_reference"].(map[string]any); ok {
		m.ReplyTo, _ = ref["message_id"].(string)
	}
	if am, ok := p["allowed_mentions"].(map[string]any); ok {
		parse, isList := am["parse"].([]any)
		m.AllowedMentionsNone = isList && len(parse) == 0
	}
	for _, row := range comps {
		rm, _ := row.(map[string]any)
		cells, _ := rm["components"].([]any)
		for _, c := range cells {
			cm, _ := c.(map[string]any)
			label, _ := cm["label"].(string)
			cid, _ := cm["custom_id"].(string)
			m.Buttons = append(m.Buttons, Button{Label: label, CustomID: cid})
		}
	}
	enforce, _ := p["enforce_nonce"].(bool)
	s.mu.Lock()
	if prev, dup := s.byNonce[m.Nonce]; dup && enforce && m.Nonce != "" {
		s.mu.Unlock()
		reply(w, 200, s.messageObject(prev))
		return
	}
	m.ID = s.snowflake()
	s.sent = append(s.sent, m)
	if m.Nonce != "" {
		s.byNonce[m.Nonce] = m
	}
	obj := s.messageObject(m)
	s.history[channelID] = append(s.history[channelID], obj)
	s.dispatch("MESSAGE_CREATE", obj) // the bot sees its own message, as on Discord
	s.mu.Unlock()
	reply(w, 200, obj)
}

// listMessages is GET /channels/{id}/messages: limit 1..100 (default 50); with after, the messages right after
// that id, else those right before before (or the newest); either way newest first, as Discord answers.
func (s *Server) listMessages(w http.ResponseWriter, channelID string, q url.Values) {
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			fail(w, 400, 50035, "Invalid Form Body (limit: int value should be less than or equal to 100.)")
			return
		}
		limit = n
	}
	after, before := q.Get("after"), q.Get("before")
	for _, v := range []string{after, before} {
		if _, err := strconv.ParseUint(v, 10, 64); v != "" && err != nil {
			fail(w, 400, 50035, "Invalid Form Body (snowflake: Value is not snowflake.)")
			return
		}
	}
	s.mu.Lock()
	s.lists = append(s.lists, channelID+"?"+q.Encode())
	all := s.history[channelID]
	var pick []map[string]any
	if after != "" {
		a, _ := strconv.ParseUint(after, 10, 64)
		for _, m := range all {
			if id, _ := strconv.ParseUint(m["id"].(string), 10, 64); id > a && len(pick) < limit {
				pick = append(pick, m)
			}
		}
	} else {
		b := uint64(math.MaxUint64)
		if before != "" {
			b, _ = strconv.ParseUint(before, 10, 64)
		}
		for i := len(all) - 1; i >= 0 && len(pick) < limit; i-- {
			if id, _ := strconv.ParseUint(all[i]["id"].(string), 10, 64); id < b {
				pick = append([]map[string]any{all[i]}, pick...)
			}
		}
	}
	slices.Reverse(pick)
	s.mu.Unlock()
	if pick == nil {
		pick = []map[string]any{}
	}
	reply(w, 200, pick)
}

func (s *Server) messageObject(m Message) map[string]any {
	o := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"author":    map[string]any{"id": s.BotID, "username": "zeroclaw", "bot": true},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	if m.Nonce != "" {
		o["nonce"] = m.Nonce
	}
	if m.ReplyTo != "" {
		o["type"] = 19
		o["message_reference"] = map[string]any{"message_id": m.ReplyTo, "channel_id": m.ChannelID}
	}
	return o
}

func (s *Server) callback(w http.ResponseWriter, id, token string, p map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok, ok := s.interactions[id]; !ok || tok != token {
		fail(w, 404, 10062, "Unknown interaction")
		return
	}
	if s.answered[id] {
		fail(w, 400, 40060, "Interaction has already been acknowledged.")
		return
	}
	s.answered[id] = true
	cb := Callback{InteractionID: id}
	if t, ok := p["type"].(float64); ok {
		cb.Type = int(t)
	}
	if d, ok := p["data"].(map[string]any); ok {
		cb.Content, _ = d["content"].(string)
		f, _ := d["flags"].(float64)
		cb.Ephemeral = int(f)&64 != 0
	}
	s.callbacks = append(s.callbacks, cb)
	w.WriteHeader(http.StatusNoContent)
}

func (c *wsConn) send(v any) error {
	raw, _ := json.Marshal(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	return c.c.Write(ctx, websocket.MessageText, raw)
}

// withSeq adds "s" to a stored dispatch frame.
func withSeq(raw []byte, seq int) []byte {
	return append([]byte(fmt.Sprintf(`{"s":%d,`, seq)), raw[1:]...)
}

func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("v") != "10" || r.URL.Query().Get("encoding") != "json" {
		http.Error(w, "v=10&encoding=json expected", http.StatusBadRequest)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	wc := &wsConn{c: c, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
	defer func() {
		s.mu.Lock()
		if wc.sess != nil && wc.sess.conn == wc {
			wc.sess.conn = nil
		}
		s.mu.Unlock()
	}()
	if wc.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": s.HeartbeatMs}}) != nil {
		return
	}
	go s.pump(wc)
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(raw, &p) != nil {
			_ = c.Close(4002, "Error while decoding payload.")
			return
		}
		switch p.Op {
		case 1:
			s.mu.Lock()
			s.heartbeats++
			silent := s.noAcks
			s.mu.Unlock()
			if !silent {
				_ = wc.send(map[string]any{"op": 11})
			}
		case 2, 6:
			var d struct {
				Token     string `json:"token"`
				Intents   int64  `json:"intents"`
				SessionID string `json:"session_id"`
				Seq       int    `json:"seq"`
			}
			_ = json.Unmarshal(p.D, &d)
			s.mu.Lock()
			code := s.closeNext
			s.closeNext = 0
			s.mu.Unlock()
			if code != 0 {
				_ = c.Close(websocket.StatusCode(code), "closed by the test")
				return
			}
			if d.Token != s.Token {
				_ = c.Close(4004, "Authentication failed.")
				return
			}
			if wc.sess != nil {
				_ = c.Close(4005, "Already authenticated.")
				return
			}
			if p.Op == 2 {
				s.identify(wc, d.Intents)
			} else if !s.resume(wc, d.SessionID, d.Seq) {
				_ = wc.send(map[string]any{"op": 9, "d": false})
			}
		default:
			_ = c.Close(4001, "Unknown opcode.")
			return
		}
	}
}

func (s *Server) identify(wc *wsConn, intents int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identifies++
	s.lastIntents = intents
	id := fmt.Sprintf("fakesession%d", s.identifies)
	se := &session{id: id, valid: true, conn: wc}
	s.sessions[id] = se
	wc.sess = se
	raw, _ := json.Marshal(map[string]any{"op": 0, "t": "READY", "d": map[string]any{"v": 10, "session_id": id,
		"resume_gateway_url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/resume",
		"user":               map[string]any{"id": s.BotID, "username": "zeroclaw", "bot": true}, "guilds": []any{},
		"application": map[string]any{"id": s.BotID}}})
	se.events = append(se.events, raw)
	wake(wc)
}

func (s *Server) resume(wc *wsConn, id string, seq int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.sessions[id]
	if !ok || !se.valid || seq < 0 || seq > len(se.events) {
		return false
	}
	s.resumes++
	if se.conn != nil {
		se.conn.cancel() // a newer connection takes the session over
	}
	se.conn, wc.sess = wc, se
	wc.cursor = seq
	if se.replay0 {
		wc.cursor, se.replay0 = 0, false
	}
	raw, _ := json.Marshal(map[string]any{"op": 0, "t": "RESUMED", "d": nil})
	se.events = append(se.events, raw)
	wake(wc)
	return true
}

// pump sends a connection its session's events from its cursor.
func (s *Server) pump(wc *wsConn) {
	for {
		select {
		case <-wc.ctx.Done():
			return
		case <-wc.wake:
		}
		for {
			s.mu.Lock()
			se := wc.sess
			if se == nil || se.conn != wc || wc.cursor >= len(se.events) {
				s.mu.Unlock()
				break
			}
			frame := withSeq(se.events[wc.cursor], wc.cursor+1)
			wc.cursor++
			s.mu.Unlock()
			var v json.RawMessage = frame
			if wc.send(v) != nil {
				return
			}
		}
	}
}
