// Package tgfake is a loopback Telegram Bot API for tests: the real HTTP JSON wire (POST
// /bot<token>/<method>, {"ok":...,"result":...}), long-polled getUpdates with offset confirmation, and its own
// record of what it was sent. Faults can be injected per method: 429 with retry_after, 5xx, hangs, and the
// redelivery of updates already confirmed.
package tgfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Fault is one injected failure of a method's next call.
type Fault struct {
	Status     int // 429, 500, 502...
	RetryAfter int // seconds, for 429
	Hang       bool
}

// Message is one sendMessage the fake accepted (answered ok).
type Message struct {
	MessageID int64
	ChatID    int64
	ThreadID  int64
	ReplyTo   int64
	Text      string
	Buttons   []Button
}

// Button is an inline keyboard button of a sent message.
type Button struct{ Text, Data string }

// Server is the fake Bot API.
type Server struct {
	Token string
	srv   *httptest.Server

	mu        sync.Mutex
	updates   []json.RawMessage // every update, by position; update_id = index+1
	confirmed int64             // highest update_id confirmed by an offset
	nextMsg   int64
	sent      []Message
	acks      []string // answerCallbackQuery texts
	actions   int      // sendChatAction calls
	polls     int
	faults    map[string][]Fault
	redeliver bool // the next getUpdates ignores the confirmed offset
	wake      chan struct{}
}

// Start runs a fake for token on a loopback port; Close stops it.
func Start(token string) *Server {
	s := &Server{Token: token, faults: map[string][]Fault{}, wake: make(chan struct{}), nextMsg: 1000}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the api_base_url to configure.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server (a hanging request is released).
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Inject queues faults for method's next calls, in order.
func (s *Server) Inject(method string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f...)
}

// ClearFaults drops the faults still queued: the platform has recovered.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

// Redeliver makes the next getUpdates return every update from the first again, as Telegram does for a bot
// that never confirmed them.
func (s *Server) Redeliver() {
	s.mu.Lock()
	s.redeliver = true
	s.mu.Unlock()
}

func (s *Server) add(u map[string]any) int64 {
	s.mu.Lock()
	id := int64(len(s.updates) + 1)
	u["update_id"] = id
	raw, _ := json.Marshal(u)
	s.updates = append(s.updates, raw)
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
	return id
}

// SendText queues a private text message from user (chat id = user id) and returns its update_id, which is
// also the message's message_id (so a reply's ReplyTo names the update it answers).
func (s *Server) SendText(user int64, username, text string) int64 {
	s.mu.Lock()
	next := int64(len(s.updates) + 1)
	s.mu.Unlock()
	return s.add(map[string]any{"message": map[string]any{"message_id": next,
		"from": map[string]any{"id": user, "is_bot": false, "username": username},
		"chat": map[string]any{"id": user, "type": "private"}, "date": time.Now().Unix(), "text": text}})
}

// Press queues user's press of a button carrying data, on a message in chat.
func (s *Server) Press(user int64, chat int64, data string) int64 {
	s.mu.Lock()
	qid := len(s.updates) + 1
	s.mu.Unlock()
	return s.add(map[string]any{"callback_query": map[string]any{"id": "cq" + itoa(int64(qid)),
		"from": map[string]any{"id": user, "is_bot": false}, "data": data,
		"message": map[string]any{"message_id": 1, "chat": map[string]any{"id": chat, "type": "private"}}}})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Sent is every message accepted so far.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// Acks is every answerCallbackQuery text so far.
func (s *Server) Acks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acks...)
}

// Confirmed is the highest update_id a getUpdates offset confirmed.
func (s *Server) Confirmed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Polls counts getUpdates calls; ChatActions counts sendChatAction calls.
func (s *Server) Polls() int       { s.mu.Lock(); defer s.mu.Unlock(); return s.polls }
func (s *Server) ChatActions() int { s.mu.Lock(); defer s.mu.Unlock(); return s.actions }

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, desc string, retryAfter int) {
	body := map[string]any{"ok": false, "error_code": status, "description": desc}
	if retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	reply(w, status, body)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot"+s.Token+"/")
	if !ok || r.Method != http.MethodPost {
		fail(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: can't parse JSON", 0)
		return
	}
	s.mu.Lock()
	var f *Fault
	if q := s.faults[rest]; len(q) > 0 {
		f = &q[0]
		s.faults[rest] = q[1:]
	}
	s.mu.Unlock()
	if f != nil {
		switch {
		case f.Hang:
			<-r.Context().Done()
			return
		case f.Status == http.StatusTooManyRequests:
			fail(w, f.Status, "Too Many Requests: retry after "+itoa(int64(f.RetryAfter)), f.RetryAfter)
			return
		default:
			fail(w, f.Status, "Internal Server Error", 0)
			return
		}
	}
	switch rest {
	case "getUpdates":
		s.getUpdates(w, r.Context(), p)
	case "sendMessage":
		s.sendMessage(w, p)
	case "sendChatAction":
		s.mu.Lock()
		s.actions++
		s.mu.Unlock()
		reply(w, 200, map[string]any{"ok": true, "result": true})
	case "answerCallbackQuery":
		text, _ := p["text"].(string)
		s.mu.Lock()
		s.acks = append(s.acks, text)
		s.mu.Unlock()
		reply(w, 200, map[string]any{"ok": true, "result": true})
	default:
		fail(w, http.StatusNotFound, "Not Found: method not found", 0)
	}
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func (s *Server) getUpdates(w http.ResponseWriter, ctx context.Context, p map[string]any) {
	offset, timeout := num(p["offset"]), num(p["timeout"])
	deadline := time.NewTimer(time.Duration(min(timeout, 50)) * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		s.polls++
		if offset > 0 && offset-1 > s.confirmed {
			s.confirmed = min(offset-1, int64(len(s.updates)))
		}
		from := s.confirmed
		if s.redeliver {
			from, s.redeliver = 0, false
		}
		var out []json.RawMessage
		for i := from; i < int64(len(s.updates)) && len(out) < 100; i++ {
			out = append(out, s.updates[i])
		}
		wake := s.wake
		s.mu.Unlock()
		if len(out) > 0 || timeout == 0 {
			reply(w, 200, map[string]any{"ok": true, "result": out})
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			reply(w, 200, map[string]any{"ok": true, "result": []any{}})
			return
		case <-ctx.Done():
			return
		}
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, p map[string]any) {
	text, _ := p["text"].(string)
	if text == "" {
		fail(w, http.StatusBadRequest, "Bad Request: message text is empty", 0)
		return
	}
	if len([]rune(text)) > 4096 {
		fail(w, http.StatusBadRequest, "Bad Request: message is too long", 0)
		return
	}
	m := Message{ChatID: num(p["chat_id"]), ThreadID: num(p["message_thread_id"]), Text: text}
	if rp, ok := p["reply_parameters"].(map[string]any); ok {
		m.ReplyTo = num(rp["message_id"])
	}
	if kb, ok := p["reply_markup"].(map[string]any); ok {
		rows, _ := kb["inline_keyboard"].([]any)
		for _, row := range rows {
			cells, _ := row.([]any)
			for _, c := range cells {
				cell, _ := c.(map[string]any)
				t, _ := cell["text"].(string)
				d, _ := cell["callback_data"].(string)
				m.Buttons = append(m.Buttons, Button{Text: t, Data: d})
			}
		}
	}
	s.mu.Lock()
	s.nextMsg++
	m.MessageID = s.nextMsg
	s.sent = append(s.sent, m)
	s.mu.Unlock()
	reply(w, 200, map[string]any{"ok": true, "result": map[string]any{"message_id": m.MessageID,
		"chat": map[string]any{"id": m.ChatID}, "date": time.Now().Unix(), "text": text}})
}
