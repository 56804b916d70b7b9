package gateway

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// GET /api/events is upstream's live stream (crates/zeroclaw-gateway/src/sse.rs): Server-Sent Events, one
// `data:` line per runtime event as /api/logs reads them (the same JSON), from the moment the client connects,
// with a comment line every streamKeepAlive so proxies keep the connection. It needs logs:read. At most
// maxEventStreams streams are open at once (more are 503); each is a cursor on the log hub's ring, so a slow
// reader costs no buffer (it is told, as a comment, how many events it missed). Like the WebSocket routes it
// skips the request timeout; a stream ends with its client, a write that takes longer than
// rpc.write_timeout_ms, or the gateway's shutdown.

const (
	maxEventStreams = 32
	streamKeepAlive = 15 * time.Second
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

// eventRoutes mounts /api/events outside the request timeout and the body limit.
func (s *Server) eventRoutes(mux *http.ServeMux) {
	s.patterns = append(s.patterns, "GET /api/events")
	mux.Handle("GET /api/events", s.counted("/api/events", s.serve(s.authed(s.granted(api.GrantLogsRead, s.eventStream)))))
}

func (s *Server) eventStream(w http.ResponseWriter, r *http.Request, _ caller) error {
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
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(chunks ...[]byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout()))
		for _, c := range chunks {
			if _, err := w.Write(c); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
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
			if !write([]byte("data: "), f.Line, []byte("\n\n")) {
				return nil
			}
		}
	}
}
