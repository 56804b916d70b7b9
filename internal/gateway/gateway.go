// Package gateway is the daemon's HTTP surface (upstream/gateway.md): one listener on [gateway] host:port
// (optionally TLS and mTLS), one middleware chain (metrics, security headers, path prefix, body limit, request
// timeout), bearer-token principals from pairing, and routes that are thin adapters over the same domain calls
// the RPC methods make. WebSocket routes plug into the same mux and principal resolution.
package gateway

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// MaxBodyBytes is the request body limit of every route (upstream's 64 KiB).
const MaxBodyBytes = 64 << 10

// Identity is who a gateway request acts as.
type Identity struct {
	Principal *auth.Principal
	// Resolve derives the principal again from another config (nil: refused), for checks made under the config
	// write lock; nil keeps Principal.
	Resolve func(*config.Config) *auth.Principal
	Label   string // "http:<client key>"
	// Subject is the sha256 of the paired bearer token ("" with pairing off): upstream's approval subject, so
	// a SOP approval group lists a device as http:<sha256>.
	Subject string
}

// Daemon is what the gateway serves: the daemon implements it over its config manager, method table, session
// manager and protocol servers. Every route is one of these calls behind the gateway's own checks.
type Daemon interface {
	// Config is the live config, read per request.
	Config() *config.Config
	// Call serves one native RPC method for an authenticated gateway caller: the same table, grant check and
	// error mapping as the socket (rpc.Server.Call). Errors are *jsonrpc.Error.
	Call(ctx context.Context, id Identity, method string, params json.RawMessage) (any, error)
	// Reload re-reads the config and applies it (POST /admin/reload).
	Reload(ctx context.Context) error
	// Shutdown asks the daemon to stop (POST /admin/shutdown); must not block.
	Shutdown()
	// RunWebhook runs one unattended turn (nobody can approve: what the agent's profile would ask about is
	// refused) for caller on agent ("": the default agent) in session sessionID, and returns the answer. A
	// session the caller may not prompt (session/prompt's ownership rule) is an error wrapping
	// ErrSessionNotOwned.
	RunWebhook(ctx context.Context, caller *auth.Principal, agent, sessionID, message string) (string, error)
	// ServeACP serves the ACP protocol over f for an authenticated /acp client until the connection ends; agent
	// is the connection's default agent.
	ServeACP(ctx context.Context, f jsonrpc.Framer, id Identity, agent string)
	// ServeMCP serves one streamable HTTP request of /mcp (the daemon as an MCP server) for an authenticated
	// client; owner keys its sessions (a session opened with one token is refused to another).
	ServeMCP(w http.ResponseWriter, r *http.Request, id Identity, owner string)
	// ServeRPC serves the native protocol over f for an authenticated [wss] client until the connection ends.
	ServeRPC(ctx context.Context, f jsonrpc.Framer, id Identity)
	// Tools are the tools this daemon implements, for GET /api/tools; with an agent ("" : none), also the
	// tools of its MCP servers that are up, and those servers' states.
	Tools(agent string) ([]ToolSpec, []api.MCPServerStatus)
	// AgentFiles is agent's workspace (ErrFileNotFound for an agent not configured); SharedFiles is the
	// install's shared/ directory. Both refuse every path outside them and into the install's data.
	AgentFiles(agent string) (FileTree, error)
	SharedFiles() (FileTree, error)
	// Events is the runtime event log GET /api/events streams (nil: none).
	Events() *logs.Hub
	// SopEngine is the SOP engine whose run changes GET /ws/sops/runs streams (nil: none runs).
	SopEngine() *engine.Engine
	// ApprovalsChanged is a channel closed at the next change of any live session's pending tool-call
	// approvals (GET /api/approvals/events waits on it, then lists them again).
	ApprovalsChanged() <-chan struct{}
	// Channels is each running chat channel's state (GET /api/channels); nil: none.
	Channels(ctx context.Context) []api.ChannelStatus
	// Chat runs the sessions and turns of /ws/chat.
	Chat
}

// Options wire the gateway to the daemon. Only Daemon and Pairing are needed to serve; the rest have defaults.
type Options struct {
	Daemon  Daemon
	Pairing *pairing.Manager
	Metrics *Metrics // nil: a fresh registry
	Clock   clock.Clock
	Logger  *slog.Logger

	// Spare is the daemon's reserved fd for its local socket (nil: none). While it is given up, each connection
	// the gateway accepts is refused and its fd handed back to the reserve at once, so that a flood which took
	// every other fd cannot also take the one the owner's next `status` needs.
	Spare Spare

	// The seams tests use to bind kernel-picked ports and mint known ids.

	// NewID mints webhook session ids; nil means random.
	NewID func() string
	// Listen binds the gateway's TCP address; nil means net.Listen.
	Listen func(network, addr string) (net.Listener, error)
	// Ready, if set, is called with the bound address each time a listener starts (at start and after a
	// reload that changed the bind).
	Ready func(addr net.Addr, tls bool)
	// WSSListen binds the [wss] address; nil means net.Listen. WSSReady, if set, is called with its address.
	WSSListen func(network, addr string) (net.Listener, error)
	WSSReady  func(addr net.Addr)
}

// Spare is a reserved fd another listener holds (listen.Server with SpareFD).
type Spare interface {
	// SpareMissing reports whether the reserve is given up.
	SpareMissing() bool
	// RefillSpare takes it again (the lowest free fd), reporting whether it is held afterwards.
	RefillSpare() bool
}

// Server is the gateway. mu guards the fields below it; wg owns every serving goroutine and the shutdown of
// listeners replaced by a reload.
type Server struct {
	o       Options
	log     *slog.Logger
	handler http.Handler
	limits  *limiters
	webhook *idempotency
	ws      wsState
	events  eventStreams // the open GET /api/events streams
	wss     wssListener
	wg      sync.WaitGroup
	// patterns are the registered routes (Routes), written while New builds the mux only.
	patterns []string
	conns    connCap // the TCP connections of every listener
	nofile   uint64  // RLIMIT_NOFILE at start (0: unknown)

	status atomic.Pointer[api.GatewayStatus] // set by Apply under mu, read without it

	mu      sync.Mutex
	cur     *binding
	bindErr error          // why the last Apply could not bind; nil after a bind that worked
	want    string         // the host:port the last Apply asked for
	retired []*http.Server // listeners a reload replaced, still draining
	closed  bool
}

// binding is one listener and the http.Server on it.
type binding struct {
	key  bindKey
	srv  *http.Server
	addr net.Addr
	tls  bool
}

// bindKey is what, changed by a reload, needs a new listener.
type bindKey struct {
	host string
	port int
	tls  config.GatewayTLSConfig
}

func keyOf(cfg *config.Config) bindKey {
	return bindKey{host: cfg.Gateway.Host, port: cfg.Gateway.Port, tls: cfg.Gateway.TLS}
}

// New builds the gateway; nothing listens until Apply.
func New(o Options) *Server {
	o.Clock = clock.OrReal(o.Clock)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.Listen == nil {
		o.Listen = net.Listen
	}
	if o.WSSListen == nil {
		o.WSSListen = net.Listen
	}
	if o.NewID == nil {
		o.NewID = randomID
	}
	s := &Server{o: o, log: o.Logger.With("component", "gateway")}
	s.limits = newLimiters(o.Clock)
	s.webhook = newIdempotency(o.Clock)
	s.nofile = fdLimit()
	s.handler = s.withBodyBounds(s.routes())
	return s
}

// Handler is the gateway's whole handler chain (for tests and benchmarks that serve it themselves).
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics is the registry /metrics serves.
func (s *Server) Metrics() *Metrics { return s.o.Metrics }

// Addr is the bound address, nil when not listening.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.addr
}

// Status is the gateway's state as status.gateway reports it: served at an address, or not served and why.
// It is nil until the first Apply. The value is never modified; each Apply publishes a new one.
func (s *Server) Status() *api.GatewayStatus { return s.status.Load() }

// publish records the outcome of an Apply for Status. mu is held.
func (s *Server) publish(cfg *config.Config, want string, err error) {
	st := &api.GatewayStatus{State: api.GatewayNotServed, Addr: want}
	if s.cur != nil {
		scheme := "http"
		if s.cur.tls {
			scheme = "https"
		}
		st = &api.GatewayStatus{State: api.GatewayServed, Addr: s.cur.addr.String(),
			URL: scheme + "://" + s.cur.addr.String() + cfg.Gateway.PathPrefix}
	}
	if err != nil {
		st.Error = err.Error() // not served; or, while served, why a reload could not move it
	}
	if old := s.status.Load(); old == nil || *old != *st {
		s.status.Store(st)
	}
}

// Apply makes the listener match cfg: on the first call it binds; later (a reload) it binds anew only when
// host, port or TLS changed, and the replaced listener finishes its requests in the background. Settings read
// per request (prefix, limits, timeouts, pairing) need no rebind. A failed bind keeps the current listener.
// ctx bounds nothing but is the parent of the replaced listener's drain (cut short by Shutdown).
func (s *Server) Apply(ctx context.Context, cfg *config.Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("gateway: closed")
	}
	key := keyOf(cfg)
	want := net.JoinHostPort(key.host, strconv.Itoa(key.port))
	if s.cur != nil && s.cur.key == key {
		s.publish(cfg, want, nil)
		return nil
	}
	b, err := s.bind(cfg, key)
	if err != nil {
		s.publish(cfg, want, err)
		return err
	}
	old := s.cur
	s.cur = b
	s.publish(cfg, want, nil)
	if old != nil {
		s.retired = append(s.retired, old.srv)
		s.wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := old.srv.Shutdown(ctx); err != nil {
				_ = old.srv.Close()
			}
		})
	}
	return nil
}

// bind listens on cfg's address and starts serving there. mu is held.
func (s *Server) bind(cfg *config.Config, key bindKey) (*binding, error) {
	g := cfg.Gateway
	addr := net.JoinHostPort(g.Host, strconv.Itoa(g.Port))
	var tlsCfg *tls.Config
	if g.TLS.Enabled {
		var err error
		if tlsCfg, err = loadTLS(g.TLS); err != nil {
			return nil, err
		}
	}
	raw, err := s.o.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gateway: listen on %s: %w", addr, err)
	}
	var ln net.Listener = s.capped(raw)
	if !isLoopbackHost(g.Host) && !g.AllowPublicBind {
		s.log.Warn("gateway bound to a public address; set gateway.allow_public_bind = true to silence this, or bind 127.0.0.1",
			"addr", ln.Addr().String())
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ConnState:         s.o.Metrics.connState,
	}
	srv.RegisterOnShutdown(s.events.endAll) // net/http waits for a stream's handler, which waits for events
	if tlsCfg != nil {
		srv.TLSConfig = tlsCfg
		ln = tls.NewListener(ln, tlsCfg)
	}
	b := &binding{key: key, srv: srv, addr: ln.Addr(), tls: tlsCfg != nil}
	s.wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("gateway listener stopped", "err", err)
		}
	})
	scheme := "http"
	if b.tls {
		scheme = "https"
	}
	s.log.Info("gateway listening", "addr", b.addr.String(), "scheme", scheme)
	if s.o.Ready != nil {
		s.o.Ready(b.addr, b.tls)
	}
	return b, nil
}

// loadTLS reads the certificate, key and (mTLS) client CAs named by [gateway.tls].
func loadTLS(t config.GatewayTLSConfig) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.CertPath, t.KeyPath)
	if err != nil {
		return nil, fmt.Errorf("gateway: tls: load %s and %s: %w", t.CertPath, t.KeyPath, err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientAuth.Enabled {
		pem, err := os.ReadFile(t.ClientAuth.CACertPath)
		if err != nil {
			return nil, fmt.Errorf("gateway: tls: client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("gateway: tls: client CA %s holds no PEM certificate", t.ClientAuth.CACertPath)
		}
		c.ClientCAs = pool
		c.ClientAuth = tls.VerifyClientCertIfGiven
		if t.ClientAuth.RequireClientCert {
			c.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return c, nil
}

// isLoopbackHost reports whether a bind host is loopback only ("localhost", 127.0.0.0/8, ::1).
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Shutdown stops accepting, lets requests in flight finish until ctx ends, then closes what is left. It waits
// for every goroutine the server started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	cur, retired := s.cur, s.retired
	s.cur, s.retired = nil, nil
	s.mu.Unlock()
	s.events.close()
	var err error
	if cur != nil {
		if err = cur.srv.Shutdown(ctx); err != nil {
			_ = cur.srv.Close()
		}
	}
	for _, r := range retired {
		_ = r.Close() // a replaced listener still draining past the daemon's deadline
	}
	s.wss.shutdown(ctx)
	s.ws.shutdown(ctx) // hijacked sockets: net/http neither ends nor waits for them
	s.wg.Wait()
	return err
}

// writeJSON writes v with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes upstream's error body {"error": msg}: handleError's, and the transport middleware's
// (prefix, body limit, timeouts, guard), which answer before any handler runs.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": msg})
}

// readJSON decodes a JSON body into v (an empty body leaves v as it is). The body limit turns into 413.
func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit))
	}
	if err != nil {
		return fail(http.StatusBadRequest, "could not read the request body")
	}
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fail(http.StatusBadRequest, "invalid JSON body: "+err.Error())
	}
	return nil
}

// randomID is 16 random hex digits.
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
