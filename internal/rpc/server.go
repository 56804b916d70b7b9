package rpc

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// Info describes the running daemon for status and initialize.
type Info struct {
	PID        int
	UID        int // the daemon's own uid: peers with it are the shared operator
	StartedAt  time.Time
	ConfigDir  string
	ConfigFile string
	// ConfigKind is status.config_kind: api.ConfigKindDefault, ConfigKindCustom or ConfigKindTemporary.
	ConfigKind string
	DataDir    string
	Endpoint   string
}

// Limits are the per-connection limits of protocol.md §2.1, taken from [rpc] at accept time.
type Limits struct {
	MaxFrameBytes     int
	InitializeTimeout time.Duration
	FrameTimeout      time.Duration
	WriteTimeout      time.Duration
}

// Options wires the server to the daemon's domains. Nil domains simply leave their methods out of the table.
type Options struct {
	Logger   *slog.Logger
	Info     Info
	Config   func() *config.Config // the live config snapshot; nil => defaults, daemon uid only
	Shutdown func()                // asks the daemon to shut down gracefully; must not block
	// ConfigManager serves config/*; nil leaves those methods out.
	ConfigManager *config.Manager
	// Sessions serves session/*; nil leaves those methods out.
	Sessions *session.Manager
	// FrameBudget bounds the bytes of inbound frames held at once by all connections; nil => no shared bound.
	FrameBudget *jsonrpc.Budget
	NewTUIID    func() string
	// Memory serves memory/*; nil answers them with "Memory subsystem is not available".
	Memory *memory.Manager
	// Clock tells the time for status and tui/list and times the initialize deadline; nil means clock.Real.
	Clock clock.Clock
	// Cron serves cron/*; nil leaves those methods out.
	Cron *cron.Scheduler
	// Logs serves logs/*; nil leaves those methods out.
	Logs *logs.Hub
	// Costs serves cost/*; nil leaves those methods out.
	Costs *cost.Tracker
	// Pairing serves pair/code and devices/*; nil leaves those methods out.
	Pairing *pairing.Manager
	// MCPStatus reports the MCP servers' state for agents/status; nil: none shown.
	MCPStatus func() []api.MCPServerStatus
	// Channels reports each chat channel's state: a health component channel:<type>.<alias> each; nil: none.
	Channels func(ctx context.Context) []api.ChannelStatus
	// ChannelStates is status.channels (quick: no database read); nil: none.
	ChannelStates func() []api.ChannelBrief
	// Skills serves skills/*; nil leaves those methods out.
	Skills *skills.Catalog
	// Personality serves personality/*; nil leaves those methods out.
	Personality *workspace.Personality

	// Gateway reports the HTTP gateway's state for status; nil (or a nil result) leaves status.gateway out.
	// Must not block; the value returned is never modified, so status compares it with the one it cached.
	Gateway func() *api.GatewayStatus
	// Sop reports the SOP runtime for status; nil (or a nil result) leaves status.sop out.
	Sop func() *api.SopStatus
	// Storage reports a shared [storage] backend for status and health; nil (or a nil result) leaves it out.
	// Must not block; a value returned is never modified (a new one stands for a change).
	Storage func() *api.StorageStatus
	// Heartbeat serves heartbeat/runs and status.heartbeat; nil leaves both out.
	Heartbeat Heartbeat
	// Doctor serves doctor/run; nil leaves it out.
	Doctor func(ctx context.Context, p api.DoctorRunParams) api.DoctorResult
	// Locales downloads catalogues for locales/fetch; the zero Fetcher serves the cli catalogue from the
	// binary and skips the others.
	Locales i18n.Fetcher
	// SopLibrary serves the SOP authoring methods (sops/list, get, validate, save, create, delete, graph,
	// graph-draft, wire-draft, trigger-sources, diagnostics); nil leaves them out.
	SopLibrary *sop.Library
	// Sops serves the sops/* run methods; nil answers them "SOP subsystem not enabled" as upstream does.
	Sops *engine.Engine
	// Uploads is the byte budget of staged uploads (protocol.md §7); nil means a fresh one of
	// api.UploadBudgetBytes on Clock.
	Uploads *upload.Budget
}

// Server holds the method table and the connected peers.
type Server struct {
	opts  Options
	log   *slog.Logger
	table *router.Table[*Peer]
	peers router.Peers[*Peer] // the connections; the requests in flight on them

	feeds feeds // live log subscriptions

	statusCache atomic.Pointer[statusCache] // the last status result, encoded

	handshakes handshakeOnly // connections that closed right after initialize (versionhint.go)
}

// method is one entry of the table (router.Method for this package's Peer).
type method = router.Method[*Peer]

// handle is router.Handle for this package's Peer.
func handle[P any, R any](grant string, f func(context.Context, *Peer, *P) (R, error)) method {
	return router.Handle(grant, f)
}

func inline(m method) method {
	m.Inline = true
	return m
}

// New builds the server and its method table.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.NewTUIID == nil {
		opts.NewTUIID = newTUIID
	}
	s := &Server{opts: opts, log: opts.Logger}
	s.table = router.New(router.Options[*Peer]{Authorize: s.authorize, MapError: errmap.RPC, Logger: opts.Logger})
	s.register(api.MethodStatus, inline(handle(api.GrantStatusRead, s.status)))
	s.register(api.MethodHealth, inline(handle(api.GrantHealthRead, s.health)))
	s.register(api.MethodTUIList, inline(handle(api.GrantTUIRead, s.tuiList)))
	s.register(api.MethodShutdown, handle(api.GrantAdmin, s.shutdown))
	if opts.ConfigManager != nil {
		s.registerConfig(opts.ConfigManager)
		s.registerQuickstart(opts.ConfigManager, opts.Personality)
	}
	if opts.Sessions != nil {
		s.registerSessions(opts.Sessions)
		if opts.Uploads == nil {
			opts.Uploads = upload.NewBudget(upload.Options{Clock: opts.Clock})
			s.opts.Uploads = opts.Uploads
		}
		s.registerFiles(opts.Sessions, opts.Uploads)
		s.registerApprovals(opts.Sessions)
	}
	s.registerConfigMeta(opts.ConfigManager, opts.Sessions)
	s.registerConfigEdit(opts.ConfigManager)
	s.registerAgents(opts.ConfigManager, opts.Sessions)
	s.registerSessionMeta(opts.Sessions)
	s.registerMemory(opts.Memory)
	if opts.Personality != nil {
		s.registerPersonality(opts.Personality)
	}
	if opts.Skills != nil {
		s.registerSkills(opts.Skills)
	}
	if opts.Cron != nil {
		s.registerCron(opts.Cron)
	}
	if opts.Heartbeat != nil {
		s.registerHeartbeat(opts.Heartbeat)
	}
	if opts.Logs != nil {
		s.registerLogs(opts.Logs)
	}
	if opts.Costs != nil {
		s.registerCost(opts.Costs)
	}
	if opts.Pairing != nil {
		s.registerPairing(opts.Pairing)
	}
	if opts.Doctor != nil {
		s.registerDoctor(opts.Doctor)
	}
	s.registerLocales()
	s.registerSopRuns(opts.Sops)
	s.registerSops(opts.SopLibrary)
	return s
}

// register adds a method to the table; domains that are wired later (config, sessions) use it. It must be called
// before the first connection is served.
func (s *Server) register(name string, m method) { s.table.Register(name, m) }

// Capabilities lists exactly the methods served, sorted, initialize first.
func (s *Server) Capabilities() []string {
	return append([]string{api.MethodInitialize}, s.table.Names()...)
}

// ServeConn serves one accepted connection until it closes. It never panics on client input.
func (s *Server) ServeConn(ctx context.Context, nc net.Conn, info PeerInfo, lim Limits) error {
	return s.ServeFramer(ctx, jsonrpc.NewStream(nc), info, lim)
}

// ServeFramer serves one connection over any transport (a WebSocket carries one frame per message) until it
// closes, exactly as ServeConn serves a socket.
func (s *Server) ServeFramer(ctx context.Context, f jsonrpc.Framer, info PeerInfo, lim Limits) error {
	peer := &Peer{ID: router.NewConnID(), Info: info, ConnectedAt: s.opts.Clock.Now()}
	log := s.log.With("conn", info.Label)
	conn := jsonrpc.NewConn(f, jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) (any, error) {
		return s.dispatch(ctx, peer, req)
	}), jsonrpc.Options{
		MaxFrameBytes: lim.MaxFrameBytes,
		FrameTimeout:  lim.FrameTimeout,
		WriteTimeout:  lim.WriteTimeout,
		Concurrent:    s.concurrent,
		Inline:        s.inline,
		Budget:        s.opts.FrameBudget,
		Payload:       peer.chunkPayload,
		Logger:        log,
	})
	peer.conn = conn
	s.peers.Add(peer.ID, peer, conn.Abort)
	defer func() {
		s.noteClosed(peer)
		s.endFeeds(peer)
		s.peers.Remove(peer.ID)
		peer.dropUploads() // an upload belongs to its connection (protocol.md §7)
		if s.opts.Sessions != nil {
			// Sessions survive; the turns this connection started are cancelled and its approvals denied.
			s.opts.Sessions.Disconnected(peer.ID)
		}
	}()
	if lim.InitializeTimeout > 0 {
		t := s.opts.Clock.AfterFunc(lim.InitializeTimeout, func() {
			if !peer.Initialized() {
				log.Info("closing connection: initialize deadline passed")
				conn.Close()
			}
		})
		defer t.Stop()
	}
	log.Debug("connection accepted")
	err := conn.Serve(ctx)
	log.Debug("connection closed")
	return err
}

// inline: initialize and the cheap in-memory methods skip the dispatcher handoff.
func (s *Server) inline(name string) bool {
	return name == api.MethodInitialize || s.table.Inline(name)
}

func (s *Server) concurrent(name string) bool { return s.table.Concurrent(name) }

// dispatch applies the handshake gate, then serves the request from the method table (which calls authorize).
func (s *Server) dispatch(ctx context.Context, p *Peer, req *jsonrpc.Request) (any, error) {
	s.peers.Begin()
	defer s.peers.End()
	if req.Method == api.MethodInitialize {
		res, err := s.initialize(ctx, p, req.Params)
		return res, s.table.WireError(err, req)
	}
	if !p.Initialized() {
		if req.IsNotification() {
			return nil, nil
		}
		return nil, jsonrpc.NewError(api.CodeAuthRequired, "First call must be 'initialize'", nil)
	}
	p.calls.Add(1)
	return s.table.Dispatch(ctx, p, req)
}

// authorize is the table's grant check. Authority is resolved again for every request from the config in force,
// so a revoked grant or a removed user takes effect at once, not at the next initialize. The config is an
// immutable snapshot: while it is the one the principal was resolved from, the answer is the same, so it is
// reused.
func (s *Server) authorize(_ context.Context, p *Peer, grant string) error {
	cfg := s.config()
	p.mu.Lock()
	pr, fresh := p.principal, p.fixed || p.resolved && p.resolvedFrom == cfg
	p.mu.Unlock()
	if !fresh {
		var err error
		if pr, err = s.principalOf(cfg, p); err != nil {
			return err
		}
		p.mu.Lock()
		p.principal, p.resolvedFrom, p.resolved = pr, cfg, true
		p.mu.Unlock()
	}
	if grant != "" && !pr.Allows(grant) {
		return forbidden(grant)
	}
	return nil
}

// Peers returns the connected peers, in the order they connected.
func (s *Server) Peers() []*Peer { return s.peers.List() }

// Drain waits until no connection has a request in flight, or ctx ends. It does not close connections: the
// caller cancels the connections' context (each flushes what it has queued and closes) and, past its deadline,
// calls CloseAll.
func (s *Server) Drain(ctx context.Context) { _ = s.peers.Drain(ctx) }

// CloseAll closes every connection at once: it closes the transports too, so a connection still flushing to a
// client that does not read (each frame may wait up to the write timeout) ends now instead.
func (s *Server) CloseAll() { s.peers.CloseAll() }

// peerCount is len(Peers()) without the copy.
func (s *Server) peerCount() int { return s.peers.Len() }
