package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// wsState tracks the WebSocket connections the gateway has upgraded, on the skeleton every protocol server
// shares (router.Peers). net/http forgets a connection once it is hijacked, so Shutdown would neither end nor
// wait for them: each one registers here, and shutdown cancels their contexts (which closes the sockets) and
// waits for their handlers.
type wsState struct {
	conns router.Peers[struct{}]
}

// track derives the context a WebSocket connection is served with: it ends with the request or at shutdown.
// ok is false once shutdown began. The caller must call done when the connection is over.
func (w *wsState) track(parent context.Context) (ctx context.Context, done func(), ok bool) {
	// The handler counts as work in flight before it registers, so a shutdown that closed the registry after
	// the count began still waits for it (its registration is refused, or its context cancelled).
	w.conns.Begin()
	ctx, cancel := context.WithCancel(parent)
	id := router.NewConnID()
	if !w.conns.Add(id, struct{}{}, cancel) {
		cancel()
		w.conns.End()
		return nil, nil, false
	}
	return ctx, func() {
		cancel()
		w.conns.Remove(id)
		w.conns.End()
	}, true
}

// shutdown ends every tracked connection and waits for their handlers (or ctx).
func (w *wsState) shutdown(ctx context.Context) {
	w.conns.Close()
	_ = w.conns.Drain(ctx)
}

// upgrade accepts a WebSocket upgrade counted by s.ws (answered 503 once the gateway is shutting down) and runs
// serve with the connection's life and the socket, which is closed when serve returns. A refused upgrade has
// been answered by the library.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request, subprotocols []string, serve func(ctx context.Context, conn *websocket.Conn)) error {
	ctx, done, ok := s.ws.track(r.Context())
	if !ok {
		return fail(http.StatusServiceUnavailable, "the gateway is shutting down")
	}
	defer done()
	// withGuard has checked the Origin; the library checks it again, against the same allowed origins.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: subprotocols,
		OriginPatterns: originPatterns(s.o.Daemon.Config().Gateway)})
	if err != nil {
		return nil // Accept answered the request
	}
	defer func() { _ = conn.CloseNow() }()
	serve(ctx, conn)
	return nil
}

// wsToken is the bearer token of a WebSocket upgrade (upstream's extract_ws_token): the Authorization header,
// then a "bearer.<token>" subprotocol, then ?token=.
func wsToken(r *http.Request) string {
	if tok, ok := bearer(r); ok {
		return tok
	}
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(h, ",") {
			if tok, ok := strings.CutPrefix(strings.TrimSpace(p), "bearer."); ok && tok != "" {
				return tok
			}
		}
	}
	return r.URL.Query().Get("token")
}

// wsAuthenticate is authenticate with the token taken from where a WebSocket client can put it (wsToken). A
// refused client gets its 401 (or 429) before any upgrade.
func (s *Server) wsAuthenticate(r *http.Request) (caller, error) {
	if _, ok := bearer(r); !ok {
		if tok := wsToken(r); tok != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	return s.authenticate(r)
}

// agentParam is the ?agent= of a WebSocket route (aliases agentAlias, agent_alias).
func agentParam(r *http.Request) string {
	q := r.URL.Query()
	for _, k := range []string{"agent", "agentAlias", "agent_alias"} {
		if v := q.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// wsFramer carries one JSON-RPC message per WebSocket text message (the jsonrpc.Framer contract for message
// transports). It has no Deadlines: a write is bounded by writeTimeout instead (a late write closes the
// socket), a message that has begun must arrive whole within frameTimeout (else the socket is closed), and a
// silent peer is found by keepAlive.
type wsFramer struct {
	c            *websocket.Conn
	ctx          context.Context // the connection's life; its end closes the socket
	writeTimeout time.Duration
	frameTimeout time.Duration // 0: none
	lastRead     atomic.Int64  // unix nanoseconds of the last message begun
}

func newWSFramer(ctx context.Context, c *websocket.Conn, writeTimeout time.Duration) *wsFramer {
	f := &wsFramer{c: c, ctx: ctx, writeTimeout: writeTimeout}
	f.lastRead.Store(time.Now().UnixNano())
	return f
}

// framer is newWSFramer with the gateway's write and frame timeouts.
func (s *Server) framer(ctx context.Context, c *websocket.Conn) *wsFramer {
	f := newWSFramer(ctx, c, s.writeTimeout())
	f.frameTimeout = s.frameTimeout()
	return f
}

// frameTimeout bounds the arrival of a WebSocket message once it has begun: rpc.frame_timeout_ms, as a frame on
// the local socket.
func (s *Server) frameTimeout() time.Duration {
	if ms := s.o.Daemon.Config().RPC.FrameTimeoutMS; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return jsonrpc.DefaultFrameTimeout
}

// errWSFrameTimeout ends the read of a message that did not arrive whole in time; it matches
// os.ErrDeadlineExceeded, as a late frame on a socket with deadlines does (jsonrpc.ErrFrameTimeout for a Conn).
var errWSFrameTimeout = fmt.Errorf("gateway: websocket message not received whole in time: %w", os.ErrDeadlineExceeded)

// message is one incoming WebSocket message being read: the wait for it to begin is unbounded (idle time
// between messages is the peer's), and from its first frame it has timeout to arrive whole, or the socket is
// closed (coder/websocket closes it when the read's context ends).
type message struct {
	r       io.Reader
	cancel  context.CancelFunc
	timer   *time.Timer // nil: no timeout
	due     time.Time
	expired atomic.Bool
}

// nextMessage waits for the next message of c. The caller must call end once done with it.
func nextMessage(ctx context.Context, c *websocket.Conn, timeout time.Duration) (*message, error) {
	ctx, cancel := context.WithCancel(ctx)
	_, r, err := c.Reader(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	m := &message{r: r, cancel: cancel}
	if timeout > 0 {
		m.due = time.Now().Add(timeout)
		m.timer = time.AfterFunc(timeout, func() {
			m.expired.Store(true)
			cancel()
		})
	}
	return m, nil
}

// pause stops the clock while the reader waits for something of its own (the frame budget); resume restarts it
// with what was left.
func (m *message) pause() (resume func()) {
	if m.timer == nil || !m.timer.Stop() {
		return func() {}
	}
	left := time.Until(m.due)
	return func() {
		m.due = time.Now().Add(left)
		m.timer.Reset(left)
	}
}

// err is a read error, errWSFrameTimeout when the message's time ran out.
func (m *message) err(err error) error {
	if m.expired.Load() {
		return errWSFrameTimeout
	}
	return err
}

func (m *message) end() {
	if m.timer != nil {
		m.timer.Stop()
	}
	m.cancel()
}

// ReadFrame reads one message, at most lim.Max bytes, charging lim.Grow before each piece is kept.
func (f *wsFramer) ReadFrame(lim *jsonrpc.FrameLimits) ([]byte, error) {
	limit := lim.Max
	if limit <= 0 {
		limit = jsonrpc.DefaultMaxFrameBytes
	}
	// One byte over the limit is read, so an oversized message is told from one of exactly the limit.
	f.c.SetReadLimit(int64(limit) + 1)
	m, err := nextMessage(f.ctx, f.c, f.frameTimeout)
	if err != nil {
		return nil, wsEOF(err)
	}
	defer m.end()
	f.lastRead.Store(time.Now().UnixNano())
	var buf []byte
	chunk := make([]byte, 16<<10)
	for {
		n, err := m.r.Read(chunk)
		if n > 0 {
			if len(buf)+n > limit {
				return nil, jsonrpc.ErrFrameTooLarge
			}
			if lim.Grow != nil {
				resume := m.pause()
				gerr := lim.Grow(n)
				resume()
				if gerr != nil {
					return nil, gerr
				}
			}
			buf = append(buf, chunk[:n]...)
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, m.err(wsEOF(err))
		}
	}
}

// WriteFrame sends frame without its NDJSON terminator as one text message.
func (f *wsFramer) WriteFrame(frame []byte) (int, error) {
	msg := frame
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.writeTimeout)
	defer cancel()
	if err := f.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return 0, err
	}
	return len(frame), nil
}

// Close sends the close frame; a peer that does not answer it is cut off after the library's wait.
func (f *wsFramer) Close() error {
	return f.c.Close(websocket.StatusNormalClosure, "")
}

// idleSince is when the last message began to arrive.
func (f *wsFramer) idleSince() time.Time { return time.Unix(0, f.lastRead.Load()) }

// wsEOF turns a clean close by the peer into io.EOF.
func wsEOF(err error) error {
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusNoStatusRcvd:
		return io.EOF
	}
	return err
}

// keepAlive pings c until ctx ends: when idleSince (nil: always) is every or more in the past, and a ping not
// answered within timeout closes the socket (a dead peer, or one behind a dropped NAT mapping). It needs a
// concurrent reader, which every gateway socket has.
func keepAlive(ctx context.Context, c *websocket.Conn, every, timeout time.Duration, idleSince func() time.Time) {
	if every <= 0 {
		return
	}
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if idleSince != nil {
			if idle := time.Since(idleSince()); idle < every {
				t.Reset(every - idle)
				continue
			}
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err := c.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				_ = c.CloseNow()
			}
			return
		}
		t.Reset(every)
	}
}
