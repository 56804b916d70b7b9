package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
)

// GET /api/events is upstream's live stream (crates/zeroclaw-gateway/src/sse.rs): Server-Sent Events, one
// `data:` line per runtime event as /api/logs reads them (the same JSON, led by the type and timestamp
// upstream's frames carry: see sseFrame), from the moment the client connects,
// with a comment line every streamKeepAlive so proxies keep the connection. It needs logs:read. At most
// maxEventStreams streams are open at once (more are 503); each is a cursor on the log hub's ring, so a slow
// reader costs no buffer (it is told, as a comment, how many events it missed). Like the WebSocket routes it
// skips the request timeout; a stream ends with its client, a write that takes longer than
// rpc.write_timeout_ms, or the gateway's shutdown.

const (
	maxEventStreams = 32
	streamKeepAlive = 15 * time.Second
)

// GET /api/events/history is upstream's replay of the newest events ({events: [...]}, oldest first): the
// frames the stream would have sent, at most maxHistoryEvents (upstream's buffer holds 500) and
// maxHistoryBytes of them (the oldest are left out first). It needs logs:read, as the stream.
const (
	maxHistoryEvents = 500
	maxHistoryBytes  = 1 << 20
)

// eventStreams are the open streams. mu guards the fields below.
type eventStreams struct {
	mu      sync.Mutex
	next    int
	cancels map[int]context.CancelFunc
	closed  bool
}

// add registers a stream with the cancel that ends it; ok is false when maxEventStreams are open or the
// gateway is shutting down.
func (e *eventStreams) add(cancel context.CancelFunc) (id int, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || len(e.cancels) >= maxEventStreams {
		return 0, false
	}
	if e.cancels == nil {
		e.cancels = map[int]context.CancelFunc{}
	}
	e.next++
	e.cancels[e.next] = cancel
	return e.next, true
}

func (e *eventStreams) remove(id int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.cancels, id)
}

// endAll ends every open stream (a listener's shutdown: net/http waits for their handlers to return).
func (e *eventStreams) endAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, cancel := range e.cancels {
		cancel()
	}
}

// close ends every stream and refuses new ones.
func (e *eventStreams) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.endAll()
}

// eventRoutes mounts /api/events outside the request timeout and the body limit, and its history.
func (s *Server) eventRoutes(mux *http.ServeMux) {
	s.patterns = append(s.patterns, "GET /api/events")
	mux.Handle("GET /api/events", s.counted("/api/events", s.serve(s.authed(s.granted(api.GrantLogsRead, s.eventStream)))))
	s.handle(mux, "GET /api/events/history", s.authed(s.granted(api.GrantLogsRead, s.eventHistory)))
}

// eventHistory is GET /api/events/history.
func (s *Server) eventHistory(w http.ResponseWriter, r *http.Request, c caller) error {
	hub := s.o.Daemon.Events()
	if hub == nil {
		return fail(http.StatusServiceUnavailable, "no event stream")
	}
	frames := recentFrames(r.Context(), hub, maxHistoryEvents, maxHistoryBytes, c.principal.AgentScope())
	body := append(make([]byte, 0, 64), `{"events":[`...)
	for i, f := range frames {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, f...)
	}
	body = append(body, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// recentFrames are the newest events of hub as the stream sends them (sseFrame), oldest first: at most n, and
// at most maxBytes of them together (counting the JSON only), leaving out those scope does not allow.
func recentFrames(ctx context.Context, hub *logs.Hub, n, maxBytes int, scope logs.Scope) [][]byte {
	last := hub.Seq()
	var since uint64
	if last > uint64(n) {
		since = last - uint64(n)
	}
	sub := hub.Subscribe(&since, "")
	now, cancel := context.WithCancel(ctx)
	cancel() // Next answers what the ring holds, and never waits for more
	var out [][]byte
	for {
		d, err := sub.Next(now)
		if err != nil {
			break
		}
		for _, f := range d.Frames {
			if f.Seq <= last && scope.AllowsLine(f.Line) {
				out = append(out, sseFrame(f.Line))
			}
		}
		if len(d.Frames) == 0 || d.Frames[len(d.Frames)-1].Seq >= last {
			break
		}
	}
	size, keep := 0, len(out)
	for keep > 0 && size+len(out[keep-1])+1 <= maxBytes {
		size += len(out[keep-1]) + 1
		keep--
	}
	return out[keep:]
}

// sseFrame is a runtime event as the dashboard's stream reads it: upstream's frames lead with type (what the
// dashboard filters on: agent_start, tool_call, session_created, ...) and timestamp; ours are the event's
// JSON with both put first, every field of the event kept.
func sseFrame(line []byte) []byte {
	var head struct {
		Timestamp string `json:"@timestamp"`
		Severity  int    `json:"severity_number"`
		Event     struct {
			Category string `json:"category"`
			Action   string `json:"action"`
		} `json:"event"`
	}
	if len(line) < 3 || line[0] != '{' || json.Unmarshal(line, &head) != nil {
		return line
	}
	lead, _ := json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp,omitempty"`
	}{eventType(head.Event.Category, head.Event.Action, head.Severity), head.Timestamp})
	out := make([]byte, 0, len(lead)+len(line))
	out = append(out, lead[:len(lead)-1]...)
	out = append(out, ',')
	return append(out, line[1:]...)
}

// eventType is the name upstream's stream gives an event of category and action: its observer's agent_start,
// agent_end, tool_call_start, tool_call and error, and the session_created and session_closed its dashboard
// listens for. Anything else is "log" (upstream's stream has no such event; the dashboard ignores it).
func eventType(category, action string, severity int) string {
	switch category + "/" + action {
	case "agent/start":
		return "agent_start"
	case "agent/complete", "agent/fail", "agent/cancel":
		return "agent_end"
	case "tool/invoke":
		return "tool_call_start"
	case "tool/complete":
		return "tool_call"
	case "session/create":
		return "session_created"
	case "session/close", "session/delete":
		return "session_closed"
	}
	if severity >= logs.SeverityError {
		return "error"
	}
	return "log"
}

func (s *Server) eventStream(w http.ResponseWriter, r *http.Request, c caller) error {
	scope := logs.Scope(c.principal.AgentScope())
	hub := s.o.Daemon.Events()
	if hub == nil {
		return fail(http.StatusServiceUnavailable, "no event stream")
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	id, ok := s.events.add(cancel)
	if !ok {
		return fail(http.StatusServiceUnavailable, "too many event streams open; try again later")
	}
	defer s.events.remove(id)
	sub := hub.Subscribe(nil, "")
	write := s.startSSE(w)
	if !write([]byte(": connected\n\n")) {
		return nil
	}
	for {
		wait, stop := context.WithTimeout(ctx, streamKeepAlive)
		d, err := sub.Next(wait)
		stop()
		switch {
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			if !write([]byte(": keep-alive\n\n")) {
				return nil
			}
			continue
		case err != nil:
			return nil // the client left, the gateway shuts down, or the hub closed
		}
		if d.Lag != nil && !write([]byte(": missed events "+itoa(int(d.Lag.FromSeq))+".."+itoa(int(d.Lag.ResumeSeq)-1)+"\n\n")) {
			return nil
		}
		for _, f := range d.Frames {
			if !scope.AllowsLine(f.Line) {
				continue
			}
			if !write([]byte("data: "), sseFrame(f.Line), []byte("\n\n")) {
				return nil
			}
		}
	}
}

// startSSE answers 200 as an event stream and returns its writer: each call writes its chunks under the
// gateway's write timeout and flushes them; false once the client is gone.
func (s *Server) startSSE(w http.ResponseWriter) func(chunks ...[]byte) bool {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return func(chunks ...[]byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout()))
		for _, c := range chunks {
			if _, err := w.Write(c); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
}
