// Package matrixfake is a loopback Matrix homeserver for tests: the client-server API v3 wire (/login,
// /account/whoami, /sync with since/next_batch tokens, a timeline limit and limited gaps, invites, /join,
// PUT /rooms/{id}/send/{type}/{txnId} deduped per device and transaction id, typing, /messages with
// unsigned.transaction_id, joined_members) and the spec's error shape ({"errcode","error","retry_after_ms"}).
// It keeps its own record of every event sent to it, so tests count against the homeserver's record. Faults can
// be injected per endpoint: 429 with retry_after_ms, 5xx, hangs, and a lost answer (the request takes effect,
// then the connection is cut); Redeliver makes the next /sync repeat the last batch.
package matrixfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault is one injected failure of an endpoint's next call.
type Fault struct {
	Status       int // 429, 500, 502...
	RetryAfterMS int // for 429
	Hang         bool
	// Lost: the request takes effect, then the connection is closed before any answer.
	Lost bool
}

// Message is one m.room.message event a client sent with PUT .../send (a repeated transaction id is not a new
// message: it is counted in Resends).
type Message struct {
	EventID, Room, Sender, Device, TxnID string
	MsgType, Body                        string
	// InReplyTo is m.relates_to.m.in_reply_to.event_id; Thread the m.thread root.
	InReplyTo, Thread string
}

type session struct{ user, device string }

type event struct {
	pos    int
	room   string
	raw    map[string]any
	device string // the sending device, for unsigned.transaction_id
	txn    string
	member bool // a membership change (the room's summary is sent again)
}

type room struct {
	members  map[string]bool
	invited  map[string]string // user => inviter
	joinedAt map[string]int    // user => stream position of their join (by /join)
}

type invite struct {
	pos              int
	room, user, from string
}

// Server is the fake homeserver.
type Server struct {
	Domain string
	srv    *httptest.Server

	mu        sync.Mutex
	passwords map[string]string // user id => password
	tokens    map[string]session
	rooms     map[string]*room
	aliases   map[string]string // #alias:domain => room id
	log       []*event
	invites   []invite
	txns      map[string]string // user|device|room|txn => event id
	sent      []Message
	resends   int
	typing    int
	joins     []string
	calls     map[string]int
	faults    map[string][]Fault
	lastSince map[string]int // user => since of the last batch that carried events
	redeliver bool
	confirmed int
	maxWait   time.Duration
	wake      chan struct{}
	nextID    int
}

// Start runs a fake homeserver for domain on a loopback port; Close stops it.
func Start(domain string) *Server {
	s := &Server{Domain: domain, passwords: map[string]string{}, tokens: map[string]session{}, rooms: map[string]*room{}, aliases: map[string]string{},
		txns: map[string]string{}, calls: map[string]int{}, faults: map[string][]Fault{}, lastSince: map[string]int{},
		maxWait: 30 * time.Second, wake: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the homeserver to configure.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server (hanging requests are released).
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetMaxWait caps a /sync long poll (tests use short ones).
func (s *Server) SetMaxWait(d time.Duration) { s.mu.Lock(); s.maxWait = d; s.mu.Unlock() }

// AddUser registers @local:domain with password and returns its user id.
func (s *Server) AddUser(local, password string) string {
	id := "@" + local + ":" + s.Domain
	s.mu.Lock()
	s.passwords[id] = password
	s.mu.Unlock()
	return id
}

// Token mints an access token for user on device (as a login would) and returns it.
func (s *Server) Token(user, device string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mint(user, device)
}

func (s *Server) mint(user, device string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	t := "syt_" + hex.EncodeToString(b[:])
	s.tokens[t] = session{user: user, device: device}
	return t
}

// Alias publishes #name:domain for room and returns the alias.
func (s *Server) Alias(name, roomID string) string {
	a := "#" + name + ":" + s.Domain
	s.mu.Lock()
	s.aliases[a] = roomID
	s.mu.Unlock()
	return a
}

// Revoke invalidates every access token of user (as a logout everywhere or an admin would).
func (s *Server) Revoke(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, sess := range s.tokens {
		if sess.user == user {
			delete(s.tokens, t)
		}
	}
}

// CreateRoom makes !name:domain with members joined and returns its id.
func (s *Server) CreateRoom(name string, members ...string) string {
	id := "!" + name + ":" + s.Domain
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &room{members: map[string]bool{}, invited: map[string]string{}, joinedAt: map[string]int{}}
	for _, m := range members {
		r.members[m] = true
	}
	s.rooms[id] = r
	s.appendLocked(&event{room: id, member: true, raw: map[string]any{"type": "m.room.create", "sender": firstOr(members), "content": map[string]any{}}})
	return id
}

func firstOr(m []string) string {
	if len(m) > 0 {
		return m[0]
	}
	return ""
}

func (s *Server) appendLocked(e *event) string {
	s.nextID++
	id := fmt.Sprintf("$ev%d_%s", s.nextID, s.Domain)
	e.pos = len(s.log) + 1
	e.raw["event_id"] = id
	e.raw["room_id"] = e.room
	if _, ok := e.raw["origin_server_ts"]; !ok {
		e.raw["origin_server_ts"] = time.Now().UnixMilli()
	}
	s.log = append(s.log, e)
	close(s.wake)
	s.wake = make(chan struct{})
	return id
}

// Say posts an m.text message from sender in room and returns its event id.
func (s *Server) Say(room, sender, body string) string {
	return s.SayContent(room, sender, map[string]any{"msgtype": "m.text", "body": body})
}

// SayContent posts an m.room.message with this content.
func (s *Server) SayContent(room, sender string, content map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(&event{room: room, raw: map[string]any{"type": "m.room.message", "sender": sender, "content": content}})
}

// SayEncrypted posts an m.room.encrypted event (ciphertext the bot cannot read).
func (s *Server) SayEncrypted(room, sender string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(&event{room: room, raw: map[string]any{"type": "m.room.encrypted", "sender": sender,
		"content": map[string]any{"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEn..."}}})
}

// Invite has from invite user to room.
func (s *Server) Invite(roomID, from, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rooms[roomID]
	r.invited[user] = from
	s.invites = append(s.invites, invite{pos: len(s.log) + 1, room: roomID, user: user, from: from})
	s.appendLocked(&event{room: roomID, member: true, raw: map[string]any{"type": "m.room.member", "sender": from, "state_key": user,
		"content": map[string]any{"membership": "invite"}}})
}

// Joined reports whether user is a member of room.
func (s *Server) Joined(roomID, user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rooms[roomID]
	return r != nil && r.members[user]
}

// Inject queues faults for endpoint's next calls, in order. Endpoints: login, whoami, sync, join, send, typing,
// messages, joined_members, directory.
func (s *Server) Inject(endpoint string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[endpoint] = append(s.faults[endpoint], f...)
}

// ClearFaults drops every fault not yet used.
func (s *Server) ClearFaults() { s.mu.Lock(); s.faults = map[string][]Fault{}; s.mu.Unlock() }

// Redeliver makes the next /sync of each user repeat its last batch that carried events (as a homeserver that
// lost track of the client's position would).
func (s *Server) Redeliver() { s.mu.Lock(); s.redeliver = true; s.mu.Unlock() }

// Sent is every message accepted by PUT .../send so far, in order.
func (s *Server) Sent() []Message { s.mu.Lock(); defer s.mu.Unlock(); return slices.Clone(s.sent) }

// Resends counts sends whose transaction id the server had seen (deduped, not a new message).
func (s *Server) Resends() int { s.mu.Lock(); defer s.mu.Unlock(); return s.resends }

// TypingCalls counts typing notifications.
func (s *Server) TypingCalls() int { s.mu.Lock(); defer s.mu.Unlock(); return s.typing }

// Calls counts the requests an endpoint got; "messages to" counts the /messages requests with a to token.
func (s *Server) Calls(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

// Confirmed is the highest stream position a client's /sync since token acknowledged.
func (s *Server) Confirmed() int { s.mu.Lock(); defer s.mu.Unlock(); return s.confirmed }

// Position is the stream position of the newest event.
func (s *Server) Position() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.log) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"errcode": code, "error": msg})
}

// route splits /_matrix/client/v3/<segments> into unescaped segments.
func route(r *http.Request) ([]string, bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/_matrix/client/v3/")
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil {
			return nil, false
		}
		parts[i] = u
	}
	return parts, true
}

func endpoint(method string, p []string) string {
	switch {
	case method == http.MethodPost && len(p) == 1 && p[0] == "login":
		return "login"
	case method == http.MethodGet && len(p) == 2 && p[0] == "account" && p[1] == "whoami":
		return "whoami"
	case method == http.MethodGet && len(p) == 1 && p[0] == "sync":
		return "sync"
	case method == http.MethodPost && len(p) == 2 && p[0] == "join":
		return "join"
	case method == http.MethodPut && len(p) == 5 && p[0] == "rooms" && p[2] == "send":
		return "send"
	case method == http.MethodPut && len(p) == 4 && p[0] == "rooms" && p[2] == "typing":
		return "typing"
	case method == http.MethodGet && len(p) == 3 && p[0] == "rooms" && p[2] == "messages":
		return "messages"
	case method == http.MethodGet && len(p) == 3 && p[0] == "rooms" && p[2] == "joined_members":
		return "joined_members"
	case method == http.MethodGet && len(p) == 3 && p[0] == "directory" && p[1] == "room":
		return "directory"
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	p, ok := route(r)
	ep := ""
	if ok {
		ep = endpoint(r.Method, p)
	}
	if ep == "" {
		fail(w, http.StatusNotFound, "M_UNRECOGNIZED", "Unrecognized request")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	s.mu.Lock()
	s.calls[ep]++
	var f *Fault
	if q := s.faults[ep]; len(q) > 0 {
		f = &q[0]
		s.faults[ep] = q[1:]
	}
	s.mu.Unlock()
	if f != nil && !f.Lost {
		switch {
		case f.Hang:
			<-r.Context().Done()
		case f.Status == http.StatusTooManyRequests:
			writeJSON(w, f.Status, map[string]any{"errcode": "M_LIMIT_EXCEEDED", "error": "Too many requests", "retry_after_ms": f.RetryAfterMS})
		default:
			fail(w, f.Status, "M_UNKNOWN", "Internal server error")
		}
		return
	}
	if f != nil && f.Lost { // the request takes effect; its answer never arrives
		w = &discard{ResponseWriter: w}
		defer cut(w.(*discard).ResponseWriter)
	}
	if ep == "login" {
		s.login(w, body)
		return
	}
	sess, ok := s.auth(r)
	if !ok {
		if r.Header.Get("Authorization") == "" && r.URL.Query().Get("access_token") == "" {
			fail(w, http.StatusUnauthorized, "M_MISSING_TOKEN", "Missing access token")
		} else {
			fail(w, http.StatusUnauthorized, "M_UNKNOWN_TOKEN", "Invalid access token passed.")
		}
		return
	}
	switch ep {
	case "whoami":
		writeJSON(w, 200, map[string]any{"user_id": sess.user, "device_id": sess.device})
	case "directory":
		s.mu.Lock()
		id, ok := s.aliases[p[2]]
		s.mu.Unlock()
		if !ok {
			fail(w, http.StatusNotFound, "M_NOT_FOUND", "Room alias "+p[2]+" not found")
			return
		}
		writeJSON(w, 200, map[string]any{"room_id": id, "servers": []string{s.Domain}})
	case "sync":
		s.sync(w, r, sess)
	case "join":
		s.join(w, sess, p[1])
	case "send":
		s.send(w, sess, p[1], p[3], p[4], body)
	case "typing":
		s.mu.Lock()
		s.typing++
		s.mu.Unlock()
		if p[3] != sess.user {
			fail(w, http.StatusForbidden, "M_FORBIDDEN", "Cannot set another user's typing state")
			return
		}
		writeJSON(w, 200, map[string]any{})
	case "messages":
		s.messages(w, r, sess, p[1])
	case "joined_members":
		s.mu.Lock()
		rm := s.rooms[p[1]]
		out := map[string]any{}
		if rm != nil && rm.members[sess.user] {
			for m := range rm.members {
				out[m] = map[string]any{"display_name": strings.TrimPrefix(m, "@")}
			}
		}
		s.mu.Unlock()
		if rm == nil || !rm.members[sess.user] {
			fail(w, http.StatusForbidden, "M_FORBIDDEN", "You aren't a member of the room")
			return
		}
		writeJSON(w, 200, map[string]any{"joined": out})
	}
}

// discard swallows the answer of a Lost request; cut then closes its connection.
type discard struct{ http.ResponseWriter }

func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
		}
	}
}

func (s *Server) auth(r *http.Request) (session, bool) {
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		t = r.URL.Query().Get("access_token")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, found := s.tokens[t]
	return sess, found && t != ""
}

func (s *Server) login(w http.ResponseWriter, body []byte) {
	var req struct {
		Type       string `json:"type"`
		Password   string `json:"password"`
		DeviceID   string `json:"device_id"`
		Identifier struct {
			Type string `json:"type"`
			User string `json:"user"`
		} `json:"identifier"`
	}
	if json.Unmarshal(body, &req) != nil {
		fail(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON.")
		return
	}
	if req.Type != "m.login.password" || req.Identifier.Type != "m.id.user" {
		fail(w, http.StatusBadRequest, "M_UNKNOWN", "Unknown login type")
		return
	}
	user := req.Identifier.User
	if !strings.HasPrefix(user, "@") {
		user = "@" + user + ":" + s.Domain
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pw, ok := s.passwords[user]; !ok || pw != req.Password {
		fail(w, http.StatusForbidden, "M_FORBIDDEN", "Invalid username or password")
		return
	}
	device := req.DeviceID
	if device == "" {
		var b [5]byte
		_, _ = rand.Read(b[:])
		device = strings.ToUpper(hex.EncodeToString(b[:]))
	}
	writeJSON(w, 200, map[string]any{"user_id": user, "access_token": s.mint(user, device), "device_id": device, "home_server": s.Domain})
}

func pos(token string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(token, "s"))
	return n, err == nil && strings.HasPrefix(token, "s") && n >= 0
}

// syncFilter is the part of an inline filter the fake honours: the timeline's event types and limit.
type syncFilter struct {
	Room struct {
		Timeline struct {
			Types []string `json:"types"`
			Limit int      `json:"limit"`
		} `json:"timeline"`
	} `json:"room"`
}

func (s *Server) sync(w http.ResponseWriter, r *http.Request, sess session) {
	q := r.URL.Query()
	var f syncFilter
	if raw := q.Get("filter"); raw != "" {
		if !strings.HasPrefix(raw, "{") || json.Unmarshal([]byte(raw), &f) != nil {
			fail(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid filter")
			return
		}
	}
	limit := f.Room.Timeline.Limit
	if limit <= 0 {
		limit = 10
	}
	since, initial := 0, true
	if t := q.Get("since"); t != "" {
		n, ok := pos(t)
		if !ok {
			fail(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid since token")
			return
		}
		since, initial = n, false
	}
	timeout, _ := strconv.Atoi(q.Get("timeout"))
	s.mu.Lock()
	if !initial && since > s.confirmed {
		s.confirmed = min(since, len(s.log))
	}
	if s.redeliver && !initial {
		since, s.redeliver = min(since, s.lastSince[sess.user]), false
	}
	wait := min(time.Duration(timeout)*time.Millisecond, s.maxWait)
	s.mu.Unlock()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		resp, n := s.batchLocked(sess, since, initial, limit, f.Room.Timeline.Types)
		wake := s.wake
		if n > 0 && !initial {
			s.lastSince[sess.user] = since
		}
		s.mu.Unlock()
		if n > 0 || initial || wait <= 0 {
			writeJSON(w, 200, resp)
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			wait = 0
		case <-r.Context().Done():
			return
		}
	}
}

// batchLocked is the sync answer for sess from since: its joined rooms' new timeline events (the newest
// `limit` of them, limited when there were more), summaries when the membership changed, and new invites.
func (s *Server) batchLocked(sess session, since int, initial bool, limit int, types []string) (map[string]any, int) {
	join, invites, n := map[string]any{}, map[string]any{}, 0
	since = min(since, len(s.log))
	for id, rm := range s.rooms {
		if !rm.members[sess.user] {
			continue
		}
		var evs []*event
		memberChanged := initial
		from := since
		if rm.joinedAt[sess.user] > since { // newly joined: the room's recent timeline, history included (as Synapse)
			from = 0
		}
		for _, e := range s.log[from:] {
			if e.room != id {
				continue
			}
			memberChanged = memberChanged || e.member
			t, _ := e.raw["type"].(string)
			if len(types) > 0 && !slices.Contains(types, t) {
				continue
			}
			evs = append(evs, e)
		}
		if len(evs) == 0 && !memberChanged {
			continue
		}
		tl := map[string]any{"limited": false, "prev_batch": "s" + strconv.Itoa(from)}
		if len(evs) > limit {
			evs, tl["limited"] = evs[len(evs)-limit:], true
			tl["prev_batch"] = "s" + strconv.Itoa(evs[0].pos-1)
		}
		rendered := []map[string]any{}
		for _, e := range evs {
			rendered = append(rendered, s.render(e, sess))
		}
		tl["events"] = rendered
		room := map[string]any{"timeline": tl, "state": map[string]any{"events": []any{}}}
		if memberChanged {
			room["summary"] = map[string]any{"m.joined_member_count": len(rm.members)}
		}
		join[id] = room
		if !initial {
			n += len(evs)
		}
	}
	for _, in := range s.invites {
		rm := s.rooms[in.room]
		if in.user != sess.user || (!initial && in.pos <= since) || rm.members[sess.user] || rm.invited[sess.user] == "" {
			continue
		}
		invites[in.room] = map[string]any{"invite_state": map[string]any{"events": []any{
			map[string]any{"type": "m.room.member", "state_key": in.user, "sender": in.from, "content": map[string]any{"membership": "invite"}},
			map[string]any{"type": "m.room.name", "state_key": "", "sender": in.from, "content": map[string]any{"name": in.room}},
		}}}
		n++
	}
	return map[string]any{"next_batch": "s" + strconv.Itoa(len(s.log)), "rooms": map[string]any{"join": join, "invite": invites}}, n
}

// render is an event as a client sees it: unsigned.transaction_id only for the device that sent it.
func (s *Server) render(e *event, sess session) map[string]any {
	out := map[string]any{}
	for k, v := range e.raw {
		out[k] = v
	}
	if e.txn != "" && e.device == sess.device && e.raw["sender"] == sess.user {
		out["unsigned"] = map[string]any{"transaction_id": e.txn}
	}
	return out
}

func (s *Server) join(w http.ResponseWriter, sess session, roomID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.rooms[roomID]
	if rm == nil {
		fail(w, http.StatusNotFound, "M_NOT_FOUND", "No known servers")
		return
	}
	if !rm.members[sess.user] {
		if rm.invited[sess.user] == "" {
			fail(w, http.StatusForbidden, "M_FORBIDDEN", "You are not invited to this room.")
			return
		}
		delete(rm.invited, sess.user)
		rm.members[sess.user] = true
		s.joins = append(s.joins, roomID)
		s.appendLocked(&event{room: roomID, member: true, raw: map[string]any{"type": "m.room.member", "sender": sess.user,
			"state_key": sess.user, "content": map[string]any{"membership": "join"},
			"unsigned": map[string]any{"prev_content": map[string]any{"membership": "invite"}}}})
		rm.joinedAt[sess.user] = len(s.log)
	}
	writeJSON(w, 200, map[string]any{"room_id": roomID})
}

func (s *Server) send(w http.ResponseWriter, sess session, roomID, typ, txn string, body []byte) {
	if len(body) > 65536 {
		fail(w, http.StatusRequestEntityTooLarge, "M_TOO_LARGE", "event too large")
		return
	}
	var content map[string]any
	if json.Unmarshal(body, &content) != nil {
		fail(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := sess.user + "|" + sess.device + "|" + roomID + "|" + txn
	if id, seen := s.txns[key]; seen {
		s.resends++
		writeJSON(w, 200, map[string]any{"event_id": id})
		return
	}
	rm := s.rooms[roomID]
	if rm == nil || !rm.members[sess.user] {
		fail(w, http.StatusForbidden, "M_FORBIDDEN", "User "+sess.user+" not in room "+roomID)
		return
	}
	mt, _ := content["msgtype"].(string)
	b, _ := content["body"].(string)
	if typ == "m.room.message" && (mt == "" || b == "") {
		fail(w, http.StatusBadRequest, "M_BAD_JSON", "msgtype and body are required")
		return
	}
	id := s.appendLocked(&event{room: roomID, device: sess.device, txn: txn,
		raw: map[string]any{"type": typ, "sender": sess.user, "content": content}})
	s.txns[key] = id
	m := Message{EventID: id, Room: roomID, Sender: sess.user, Device: sess.device, TxnID: txn, MsgType: mt, Body: b}
	if rel, ok := content["m.relates_to"].(map[string]any); ok {
		if irt, ok := rel["m.in_reply_to"].(map[string]any); ok {
			m.InReplyTo, _ = irt["event_id"].(string)
		}
		if rel["rel_type"] == "m.thread" {
			m.Thread, _ = rel["event_id"].(string)
		}
	}
	s.sent = append(s.sent, m)
	writeJSON(w, 200, map[string]any{"event_id": id})
}

// messages is GET /rooms/{id}/messages with dir=b (newest first), limit and a filter's types/senders.
func (s *Server) messages(w http.ResponseWriter, r *http.Request, sess session, roomID string) {
	q := r.URL.Query()
	var f struct {
		Types   []string `json:"types"`
		Senders []string `json:"senders"`
	}
	if raw := q.Get("filter"); raw != "" && json.Unmarshal([]byte(raw), &f) != nil {
		fail(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid filter")
		return
	}
	if q.Get("dir") != "b" {
		fail(w, http.StatusBadRequest, "M_INVALID_PARAM", "only dir=b is supported by the fake")
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 10
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := s.rooms[roomID]
	if rm == nil || !rm.members[sess.user] {
		fail(w, http.StatusForbidden, "M_FORBIDDEN", "You aren't a member of the room")
		return
	}
	from, to := len(s.log), 0
	if t := q.Get("from"); t != "" {
		n, ok := pos(t)
		if !ok {
			fail(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid from token")
			return
		}
		from = min(n, len(s.log))
	}
	if t := q.Get("to"); t != "" {
		if n, ok := pos(t); ok {
			to = n
		}
		s.calls["messages to"]++ // a bounded read back (a gap), told apart from a history scan
	}
	chunk := []map[string]any{}
	last := from
	for i := from - 1; i >= to && len(chunk) < limit; i-- {
		e := s.log[i]
		last = e.pos
		t, _ := e.raw["type"].(string)
		snd, _ := e.raw["sender"].(string)
		if e.room != roomID || len(f.Types) > 0 && !slices.Contains(f.Types, t) || len(f.Senders) > 0 && !slices.Contains(f.Senders, snd) {
			continue
		}
		chunk = append(chunk, s.render(e, sess))
	}
	out := map[string]any{"chunk": chunk, "start": "s" + strconv.Itoa(from)}
	if last-1 > to {
		out["end"] = "s" + strconv.Itoa(last-1)
	}
	writeJSON(w, 200, out)
}
