// Package acp serves the Agent Client Protocol (acp.md) that editors speak: JSON-RPC 2.0 over NDJSON, camelCase,
// session/update in ACP's shape. It only decodes, checks, maps errors (errmap.ACP) and translates the session
// layer's events; sessions, turns and approvals are the session package's.
package acp

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// ACP method names (acp.md).
const (
	MethodInitialize        = "initialize"
	MethodSessionNew        = "session/new"
	MethodSessionLoad       = "session/load"
	MethodSessionResume     = "session/resume"
	MethodSessionClose      = "session/close"
	MethodSessionPrompt     = "session/prompt"
	MethodSessionCancel     = "session/cancel"
	MethodSessionUpdate     = "session/update"             // agent → client notification
	MethodRequestPermission = "session/request_permission" // agent → client request
	MethodElicitationCreate = "elicitation/create"         // agent → client request
	// NotifyHistoryTrimmed is upstream's extension notification for a compaction (ACP's update union is closed).
	NotifyHistoryTrimmed = "_zeroclaw/history_trimmed"
)

// ProtocolVersion is the ACP version spoken.
const ProtocolVersion = 1

// Options wire the server to the daemon.
type Options struct {
	Sessions  *session.Manager
	Config    func() *config.Config // the live config snapshot
	DaemonUID int                   // peers with this uid are the operator (auth.Resolve)
	Logger    *slog.Logger
}

// Limits are the per-connection limits, taken from [rpc] at accept time.
type Limits struct {
	MaxFrameBytes int
	FrameTimeout  time.Duration
	WriteTimeout  time.Duration
}

// PeerInfo is what the transport knows about a client.
type PeerInfo struct {
	UID       int
	Label     string
	Transport auth.Transport
	// Resolve, when set, derives the principal from the config in force instead of the uid (a gateway
	// WebSocket client authenticated by a paired token); nil from it refuses the peer.
	Resolve func(*config.Config) *auth.Principal
	// DefaultAgent is the agent session/new uses when the client names none (the gateway's ?agent=).
	DefaultAgent string
}

// Server holds the method table and the connected peers. It is safe for concurrent use.
type Server struct {
	opts  Options
	log   *slog.Logger
	table *router.Table[*peer]
	peers router.Peers[*peer] // the connections; the requests in flight on them
}

// peer is one ACP connection.
type peer struct {
	id    uint64 // router.NewConnID: the session layer keys turns, approvals and held sessions by it
	info  PeerInfo
	conn  *jsonrpc.Conn
	calls sync.WaitGroup // outbound permission requests in flight

	mu          sync.Mutex // guards the fields below
	elicitation bool       // the client declared clientCapabilities.elicitation
}

// New builds the server and its method table.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: opts.Logger}
	s.table = router.New(router.Options[*peer]{Authorize: s.authorize, MapError: errmap.ACP, Logger: opts.Logger})
	s.register()
	return s
}

// ServeConn serves one accepted connection until it closes. When it ends, the turns the connection started are
// cancelled, its approvals denied and the sessions it held released (they stay loadable).
func (s *Server) ServeConn(ctx context.Context, nc net.Conn, info PeerInfo, lim Limits) error {
	return s.ServeFramer(ctx, jsonrpc.NewStream(nc), info, lim)
}

// ServeFramer serves one connection over any transport (the gateway's /acp carries one message per WebSocket
// frame) as ServeConn serves a socket.
func (s *Server) ServeFramer(ctx context.Context, f jsonrpc.Framer, info PeerInfo, lim Limits) error {
	p := &peer{id: router.NewConnID(), info: info}
	log := s.log.With("conn", info.Label, "protocol", "acp")
	p.conn = jsonrpc.NewConn(f, jsonrpc.HandlerFunc(func(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) (any, error) {
		s.peers.Begin()
		defer s.peers.End()
		return s.table.Dispatch(ctx, p, req)
	}), jsonrpc.Options{
		MaxFrameBytes: lim.MaxFrameBytes,
		FrameTimeout:  lim.FrameTimeout,
		WriteTimeout:  lim.WriteTimeout,
		Concurrent:    s.table.Concurrent,
		Inline:        s.table.Inline,
		Logger:        log,
	})
	s.peers.Add(p.id, p, p.conn.Abort)
	log.Debug("connection accepted")
	err := p.conn.Serve(ctx)
	p.calls.Wait() // they fail fast once the connection is closed
	s.opts.Sessions.Disconnected(p.id)
	s.opts.Sessions.ReleaseACP(p.id)
	s.peers.Remove(p.id)
	log.Debug("connection closed")
	return err
}

// Drain waits until no connection has a request in flight, or ctx ends; it closes nothing.
func (s *Server) Drain(ctx context.Context) { _ = s.peers.Drain(ctx) }

// CloseAll closes every connection and its transport at once.
func (s *Server) CloseAll() { s.peers.CloseAll() }

// authorize resolves the peer's principal from the config in force at every request, so a revoked user takes
// effect at once, then checks the method's grant.
func (s *Server) authorize(_ context.Context, p *peer, grant string) error {
	var cfg *config.Config
	if s.opts.Config != nil {
		cfg = s.opts.Config()
	}
	pr := s.principal(cfg, p)
	if pr == nil {
		return jsonrpc.NewError(api.CodeAuthRequired, "peer not allowed: this uid is not a configured user", nil)
	}
	if grant != "" && !pr.Allows(grant) {
		return jsonrpc.NewError(api.CodeForbidden, "Forbidden: missing grant "+grant, map[string]any{"grant": grant})
	}
	return nil
}

// owner is the session-layer identity of the peer (authorize already refused an unknown one).
func (s *Server) owner(p *peer) session.Owner {
	var cfg *config.Config
	if s.opts.Config != nil {
		cfg = s.opts.Config()
	}
	return session.OwnerOf(s.principal(cfg, p), p.id)
}

// principal is the peer's principal under cfg: from its token (Resolve) or its uid; nil when refused.
func (s *Server) principal(cfg *config.Config, p *peer) *auth.Principal {
	if p.info.Resolve != nil {
		return p.info.Resolve(cfg)
	}
	return auth.Resolve(cfg, p.info.Transport, p.info.UID, s.opts.DaemonUID)
}
