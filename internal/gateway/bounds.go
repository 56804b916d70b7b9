package gateway

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The gateway's resource bounds (issue 20 item 4): every TCP connection counts against one cap, well under the
// process's fd limit, so that hostile clients cannot take the fds the local socket, the stores and the logs need.
const (
	// DefaultMaxConnections is the cap when gateway.max_connections is 0 and the fd limit allows it.
	DefaultMaxConnections = 512
	// FDReserve is what the cap leaves of RLIMIT_NOFILE for the rest of the daemon (the local socket's clients,
	// SQLite and its WAL files, the logs) when the limit is low: half of it, at most FDReserve.
	FDReserve = 256
	// BodyGrace is how long a request body may take before body_min_bytes_per_sec applies: a body of n bytes
	// must have arrived BodyGrace + n/rate after the handler started reading it.
	BodyGrace = 5 * time.Second
	// refusalWriteTimeout bounds the 503 written to a connection past the cap.
	refusalWriteTimeout = 100 * time.Millisecond
)

// MaxConnectionsFor is the connection cap in force: configured (> 0) as it is, else DefaultMaxConnections,
// lowered when the fd limit nofile leaves less than that after its reserve (min(nofile/2, FDReserve)).
func MaxConnectionsFor(configured int, nofile uint64) int {
	if configured > 0 {
		return configured
	}
	if nofile == 0 {
		return DefaultMaxConnections
	}
	reserve := min(nofile/2, FDReserve)
	return int(max(min(nofile-reserve, DefaultMaxConnections), 1))
}

// maxConns is the cap the gateway's listeners share, read at each accept (a reload may change it).
func (s *Server) maxConns() int {
	return MaxConnectionsFor(s.o.Daemon.Config().Gateway.MaxConnections, s.nofile)
}

// connCap counts the open TCP connections of every gateway listener (HTTP and [wss]) against one cap.
type connCap struct {
	open atomic.Int64
}

// capListener admits a connection while fewer than max() are open; one past it is answered 503 and closed at
// once, so a flood holds no fd longer than one short write. A connection counts until it is closed, hijacked
// WebSockets included.
type capListener struct {
	net.Listener
	cap     *connCap
	max     func() int
	refused func()
	spare   Spare // nil: no reserve to give fds back to
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.spare != nil && l.spare.SpareMissing() {
			// Out of fds, and the local socket gave its reserve up: this connection's fd becomes the reserve.
			if l.refused != nil {
				l.refused()
			}
			refuseConn(nc)
			l.spare.RefillSpare()
			continue
		}
		if n := l.cap.open.Add(1); n > int64(l.max()) {
			l.cap.open.Add(-1)
			if l.refused != nil {
				l.refused()
			}
			refuseConn(nc)
			continue
		}
		return &cappedConn{Conn: nc, cap: l.cap}, nil
	}
}

// refuseConn answers a connection past the cap with a fixed 503 and closes it. The write goes into an empty
// socket buffer and is bounded anyway; nothing is read.
func refuseConn(nc net.Conn) {
	_ = nc.SetWriteDeadline(time.Now().Add(refusalWriteTimeout))
	_, _ = io.WriteString(nc, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"+
		"Retry-After: 1\r\nConnection: close\r\nContent-Length: 48\r\n\r\n"+
		`{"error":"Too many connections to the gateway"}`+"\n")
	_ = nc.Close()
}

// cappedConn gives its slot back once, when it is closed.
type cappedConn struct {
	net.Conn
	cap  *connCap
	once sync.Once
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.cap.open.Add(-1) })
	return err
}

// CloseWrite keeps half-closes working through the wrapper (net/http uses it before closing a connection).
func (c *cappedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// withBodyBounds bounds the reading of a request body: it must arrive at body_min_bytes_per_sec or faster (after
// BodyGrace) and within request_timeout_secs, or the read fails, the request is answered 408 and the connection
// is closed. A body the handler leaves unread is not drained (net/http would read up to 256 KiB of it, at the
// client's pace, before answering): the connection is closed after the response instead. Requests without a
// body pass untouched, so WebSocket upgrades are unaffected.
func (s *Server) withBodyBounds(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ProtoMajor != 1 {
			next.ServeHTTP(w, r)
			return
		}
		g := s.o.Daemon.Config().Gateway
		now := time.Now()
		b := &boundedBody{rc: http.NewResponseController(w), body: r.Body, start: now,
			limit: now.Add(time.Duration(g.RequestTimeoutSecs) * time.Second), rate: g.BodyMinBytesPerSec}
		bw := &boundedWriter{ResponseWriter: w, b: b}
		r.Body = b
		next.ServeHTTP(bw, r)
		bw.finish()
	})
}

// boundedBody is a request body read under a deadline that moves with the bytes received. Only the handler's
// goroutine reads it; the fields below are guarded by mu because the response writer looks at them.
type boundedBody struct {
	rc    *http.ResponseController
	body  io.ReadCloser
	start time.Time
	limit time.Time // the request timeout: no body read goes past it
	rate  int       // bytes per second; 0: no floor

	mu       sync.Mutex
	n        int64
	eof      bool
	timedOut bool
}

func (b *boundedBody) deadline() time.Time {
	if b.rate <= 0 {
		return b.limit
	}
	d := b.start.Add(BodyGrace + time.Duration(float64(b.n)/float64(b.rate)*float64(time.Second)))
	if d.After(b.limit) {
		return b.limit
	}
	return d
}

func (b *boundedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.eof {
		b.mu.Unlock()
		return 0, io.EOF
	}
	if b.timedOut { // never EOF: a cut body must not read as a shorter whole one
		b.mu.Unlock()
		return 0, errBodyTooSlow
	}
	dl := b.deadline()
	b.mu.Unlock()
	_ = b.rc.SetReadDeadline(dl)
	n, err := b.body.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		// Whole: the connection is no longer under the body's deadline (net/http's background read starts now
		// and would cancel the request at the deadline, cutting a long webhook turn short).
		b.eof = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.timedOut = true
		err = errBodyTooSlow
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// errBodyTooSlow ends the read of a body that came too slowly.
var errBodyTooSlow = errors.New("gateway: the request body arrived too slowly")

// state reports whether the body was read to its end, and whether it timed out.
func (b *boundedBody) state() (eof, timedOut bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eof, b.timedOut
}

// stopReading ends any further read of the connection: net/http's drain of an unread body fails at once and
// it closes the connection after the response.
func (b *boundedBody) stopReading() { _ = b.rc.SetReadDeadline(time.Now().Add(-time.Second)) }

// boundedWriter answers 408 for a body that timed out, whatever the handler writes, and marks the response of a
// request whose body is left unread "Connection: close". mu guards the fields below (the request timeout's 408
// writes from another goroutine).
type boundedWriter struct {
	http.ResponseWriter
	b *boundedBody

	mu      sync.Mutex
	started bool
	dropped bool // the 408 went out: the handler's output is discarded
}

// begin runs before the first byte of the response. mu is held.
func (w *boundedWriter) begin() {
	w.started = true
	eof, timedOut := w.b.state()
	if eof {
		return
	}
	w.ResponseWriter.Header().Set("Connection", "close")
	w.b.stopReading()
	if timedOut {
		w.dropped = true
		h := w.ResponseWriter.Header()
		h.Del("Content-Length")
		writeError(w.ResponseWriter, http.StatusRequestTimeout, "request body arrived too slowly")
	}
}

func (w *boundedWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.begin()
	}
	if !w.dropped {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.begin()
	}
	if w.dropped {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// finish runs when the handler returned: an unread body is not drained.
func (w *boundedWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.begin()
	}
}

// Flush passes through (the 408 middleware flushes its answer).
func (w *boundedWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.dropped {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *boundedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyCut reports whether the body bound, found by unwrapping w, answers 408 in the handler's place: it did
// (the status the handler wrote never went out), or it will when the handler returns, because the body timed
// out and nothing was written (the request timeout's writer drops the handler's answer once the failed read has
// cancelled the request). /metrics counts the 408.
func bodyCut(w http.ResponseWriter) bool {
	for w != nil {
		if bw, ok := w.(*boundedWriter); ok {
			bw.mu.Lock()
			defer bw.mu.Unlock()
			if bw.started {
				return bw.dropped
			}
			_, timedOut := bw.b.state()
			return timedOut
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

// capped puts ln under the gateway's connection cap.
func (s *Server) capped(ln net.Listener) net.Listener {
	return &capListener{Listener: ln, cap: &s.conns, max: s.maxConns, refused: s.o.Metrics.refused, spare: s.o.Spare}
}
