package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
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
	// Skills serves skills/*; nil leaves those methods out.
	Skills *skills.Catalog
	// Personality serves personality/*; nil leaves those methods out.
	Personality *workspace.Personality

	// Gateway reports the HTTP gateway's state for status; nil (or a nil result) leaves status.gateway out.
	// Must not block; the value returned is never modified, so status compares it with the one it cached.
	Gateway func() *api.GatewayStatus
	// Doctor serves doctor/run; nil leaves it out.
	Doctor func(ctx context.Context, offline bool) api.DoctorResult
	// Uploads is the byte budget of staged uploads (protocol.md §7); nil means a fresh one of
	// api.UploadBudgetBytes on Clock.
	Uploads *upload.Budget
}

// Server holds the method table and the connected peers.
type Server struct {
	opts  Options
	log   *slog.Logger
	table *router.Table[*Peer]

	nextID atomic.Uint64

	mu    sync.Mutex // mu guards peers
	peers map[*Peer]struct{}

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
	s := &Server{opts: opts, log: opts.Logger, peers: map[*Peer]struct{}{}}
	s.table = router.New(router.Options[*Peer]{Authorize: s.authorize, MapError: domainError, Logger: opts.Logger})
	s.register(api.MethodStatus, inline(handle("status:read", s.status)))
	s.register(api.MethodHealth, inline(handle("health:read", s.health)))
	s.register(api.MethodTUIList, inline(handle("tui:read", s.tuiList)))
	s.register(api.MethodShutdown, handle(auth.GrantAdmin, s.shutdown))
	if opts.ConfigManager != nil {
		s.registerConfig(opts.ConfigManager)
	}
	if opts.Sessions != nil {
		s.registerSessions(opts.Sessions)
		if opts.Uploads == nil {
			opts.Uploads = upload.NewBudget(upload.Options{Clock: opts.Clock})
			s.opts.Uploads = opts.Uploads
		}
		s.registerFiles(opts.Sessions, opts.Uploads)
	}
	s.registerConfigMeta(opts.ConfigManager, opts.Sessions)
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
	peer := &Peer{ID: s.nextID.Add(1), Info: info, ConnectedAt: s.opts.Clock.Now()}
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
	s.mu.Lock()
	s.peers[peer] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.noteClosed(peer)
		s.endFeeds(peer)
		s.mu.Lock()
		delete(s.peers, peer)
		s.mu.Unlock()
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
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
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

// Peers returns the connected peers.
func (s *Server) Peers() []*Peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Peer, 0, len(s.peers))
	for p := range s.peers {
		out = append(out, p)
	}
	return out
}

// Drain waits until no connection has a request in flight, or ctx ends. It does not close connections: the
// caller cancels the connections' context (each flushes what it has queued and closes) and, past its deadline,
// calls CloseAll.
func (s *Server) Drain(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.busy() {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// CloseAll closes every connection at once: it closes the transports too, so a connection still flushing to a
// client that does not read (each frame may wait up to the write timeout) ends now instead.
func (s *Server) CloseAll() {
	for _, p := range s.Peers() {
		p.conn.Abort()
	}
}

// peerCount is len(Peers()) without the copy.
func (s *Server) peerCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.peers)
}

func (s *Server) busy() bool {
	for _, p := range s.Peers() {
		if p.inflight.Load() > 0 {
			return true
		}
	}
	return false
}

// domainError is this protocol's error mapper (router.Options.MapError): a domain error becomes its code, with
// the structured detail the error carries as data; nil for an error no domain here defines.
func domainError(err error) *jsonrpc.Error {
	if code, ok := domainCode(err); ok {
		var data any
		var ee *config.EntryError
		var de dataError
		if errors.As(err, &de) {
			data = de.WireData()
		}
		if errors.As(err, &ee) {
			if ee.Single {
				data = map[string]any{"prop": ee.Prop}
			} else {
				data = map[string]any{"index": ee.Index, "prop": ee.Prop}
			}
		}
		return jsonrpc.NewError(code, err.Error(), data).WithCause(err)
	}
	return nil
}

// NotFound reports whether err, a method's error, says that what the request names does not exist (a session,
// cron job, skill, device, memory or log event). Several of those share a wire code with bad params (upstream's
// codes); the HTTP gateway answers them 404.
func NotFound(err error) bool {
	for _, target := range []error{session.ErrNotFound, cron.ErrNotFound, skills.ErrNotFound, pairing.ErrNotFound,
		memory.ErrNotFound, logs.ErrNotFound} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// dataError is a domain error that carries structured detail for the error's data member.
type dataError interface {
	error
	WireData() any
}

// domainCode maps domain sentinels to wire codes.
func domainCode(err error) (int, bool) {
	switch {
	case errors.Is(err, session.ErrNotFound), errors.Is(err, session.ErrNoActiveTurn), errors.Is(err, session.ErrClosed),
		errors.Is(err, session.ErrKilled):
		return api.CodeSessionNotFound, true
	case errors.Is(err, session.ErrLimit):
		return api.CodeSessionLimitReached, true
	case errors.Is(err, session.ErrBusy):
		return api.CodeSessionBusy, true
	case errors.Is(err, session.ErrNotOwned):
		return api.CodeSessionNotOwned, true
	case errors.Is(err, session.ErrInvalid), errors.Is(err, upload.ErrInvalid):
		return api.CodeInvalidParams, true
	case errors.Is(err, session.ErrAgentDenied), errors.Is(err, upload.ErrForbidden), errors.Is(err, session.ErrApprovalCapped):
		return api.CodeForbidden, true
	case errors.Is(err, config.ErrInvalidConfig), errors.Is(err, config.ErrUnknownProp),
		errors.Is(err, config.ErrInvalidPath), errors.Is(err, config.ErrInvalidValue),
		errors.Is(err, config.ErrNotEditable), errors.Is(err, config.ErrNoEntries),
		errors.Is(err, config.ErrTooManyEntries), errors.Is(err, config.ErrNoMapSection), errors.Is(err, config.ErrInvalidKey):
		return api.CodeInvalidParams, true
	case cronCode(err) != 0:
		return cronCode(err), true
	case pairingCode(err) != 0:
		return pairingCode(err), true
	}
	if code, ok := workspaceCode(err); ok {
		return code, true
	}
	if code, ok := skillsCode(err); ok {
		return code, true
	}
	return memoryCode(err)
}
