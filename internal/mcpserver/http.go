package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// SessionIdleTimeout ends a streamable HTTP session nobody has used for this long, so that abandoned sessions
// give their place under MaxSessions back.
const SessionIdleTimeout = 30 * time.Minute

// sessionHeader is the streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// httpSession is one streamable HTTP session: the client that opened it (peer, whose Owner every later request
// must match) and its own SDK server, bound to that peer.
type httpSession struct {
	peer *Peer
	srv  *mcp.Server
}

// newSessionKey carries, on the request that opens a session, the SDK server made for it.
type newSessionKey struct{}

func (s *Server) newHTTPHandler() *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if srv, ok := r.Context().Value(newSessionKey{}).(*mcp.Server); ok {
			return srv
		}
		return s.probe
	}, &mcp.StreamableHTTPOptions{
		Logger:         s.sdkLog,
		SessionTimeout: SessionIdleTimeout,
		// The gateway's guard has already applied its Host and Origin rules (gateway.allowed_hosts, the bound
		// address); the SDK's own loopback-only Host check would refuse what those allow.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        int64(s.opts.MaxFrameBytes),
	})
}

// ServeHTTP serves one streamable HTTP request of an authenticated client, peer. A request without a session
// opens one (at most MaxSessions at once, MaxPerOwner of one owner: 503 beyond) bound to peer; a request naming a session is served only
// when peer.Owner is the one that opened it (403 otherwise), so a session id seen by another device is worth
// nothing. The caller (the gateway) has authenticated the request and bounded its body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request, peer *Peer) {
	if sid := r.Header.Get(sessionHeader); sid != "" {
		s.mu.Lock()
		hs := s.sessions[sid]
		s.mu.Unlock()
		if hs != nil && hs.peer.Owner != peer.Owner {
			writeError(w, http.StatusForbidden, "this MCP session was opened by another client; open your own (initialize without "+sessionHeader+")")
			return
		}
		s.http.ServeHTTP(w, r) // an unknown session is the SDK's 404, which tells the client to initialize again
		return
	}
	if r.Method != http.MethodPost {
		s.http.ServeHTTP(w, r) // the SDK's 400: GET and DELETE need a session
		return
	}
	id, hs, err := s.reserve(peer)
	if err != nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s.http.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessionKey{}, hs.srv)))
	s.established(id, hs)
}

// reserve takes a place for a new session under the cap, with its id and SDK server.
func (s *Server) reserve(peer *Peer) (string, *httpSession, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", nil, errShuttingDown
	}
	mine := 0
	for _, hs := range s.sessions {
		if hs.peer.Owner == peer.Owner {
			mine++
		}
	}
	switch {
	case mine >= s.opts.MaxPerOwner:
		return "", nil, &capError{max: s.opts.MaxPerOwner, yours: true}
	case len(s.sessions) >= s.opts.MaxSessions:
		return "", nil, &capError{max: s.opts.MaxSessions}
	}
	hs := &httpSession{peer: peer, srv: s.newSDKServer(peer, id)}
	s.sessions[id] = hs
	return id, hs, nil
}

// established registers the session the opening request made (CloseAll reaches it) and watches for its end,
// which frees its place; a request that made none (not an initialize, or one that failed) frees it at once.
func (s *Server) established(id string, hs *httpSession) {
	var ss *mcp.ServerSession
	for x := range hs.srv.Sessions() {
		ss = x
	}
	if ss == nil {
		s.forget(id)
		return
	}
	s.mu.Lock() // the watcher is counted before Close can wait for it: Close sets closed under mu first
	if s.closed {
		s.mu.Unlock()
		_ = ss.Close()
		s.forget(id)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	conn := router.NewConnID()
	if !s.peers.Add(conn, hs.peer, func() { _ = ss.Close() }) {
		_ = ss.Close()
		s.forget(id)
		s.wg.Done()
		return
	}
	s.log.Debug("mcp session opened", "component", "mcp", "conn", conn, "peer", hs.peer.Label)
	go func() {
		defer s.wg.Done()
		_ = ss.Wait()
		s.peers.Remove(conn)
		s.forget(id)
		s.log.Debug("mcp session closed", "component", "mcp", "conn", conn, "peer", hs.peer.Label)
	}()
}

func (s *Server) forget(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

// HTTPSessions is the number of streamable HTTP sessions holding a place under MaxSessions.
func (s *Server) HTTPSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

type serverError string

func (e serverError) Error() string { return string(e) }

const errShuttingDown = serverError("the daemon is shutting down")

type capError struct {
	max   int
	yours bool // the client's own cap, not the server's
}

func (e *capError) Error() string {
	who := "too many MCP sessions open ("
	if e.yours {
		who = "too many MCP sessions open for this client ("
	}
	return who + strconv.Itoa(e.max) + "); close one (DELETE /mcp with its " + sessionHeader + ") or retry later"
}

// writeError is the gateway's error shape, {"error": "..."}.
func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
