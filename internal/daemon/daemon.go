// Package daemon is the composition root: it resolves the install, loads the config, takes the ownership locks,
// opens the stores, starts the listeners and owns the shutdown order.
package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/acp"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/install/legacy"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/listen"
	"github.com/zeroclaw-go/zeroclaw/internal/localsock"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp"
	"github.com/zeroclaw-go/zeroclaw/internal/mcpserver"
	"github.com/zeroclaw-go/zeroclaw/internal/rpc"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// DrainTimeout is how long shutdown waits for in-flight requests before closing connections (protocol.md §2.1).
const DrainTimeout = listen.DefaultDrainTimeout

// EphemeralGrace is how long an ephemeral daemon waits after its last client leaves (protocol.md §9).
const EphemeralGrace = listen.DefaultEphemeralGrace

// Options configure one daemon run.
type Options struct {
	ConfigDir string   // --config-dir; "" = resolve from the environment
	Ephemeral bool     // exit after the last client disconnects
	Environ   []string // the process environment (os.Environ()); nil => empty
	Home      string   // the user's home directory
	Logger    *slog.Logger
	// Clock is every domain's time source: stored timestamps, status uptime, the initialize deadline, idle
	// session eviction, the turn-lock and approval waits. nil means clock.Real; tests pass clocktest.Manual.
	Clock clock.Clock
	// NewID mints session, turn, approval and cost-record ids (a tui id is "tui-" + NewID()); nil means random.
	NewID func() string
	// NewProvider builds the provider an agent's model_provider names; nil means the real providers.
	NewProvider session.ProviderFactory
	// HeartbeatNotifier delivers the heartbeat's dead-man alerts and announcements; nil: the chat channels'
	// notifier (a test gives its own).
	HeartbeatNotifier heartbeat.Notifier

	// Ready, if set, is called once the endpoint accepts connections.
	Ready func(endpoint string)
	// DrainTimeout bounds the shutdown's cancel-and-drain of connections; 0 => DrainTimeout.
	DrainTimeout time.Duration
	// EphemeralGrace is how long an ephemeral daemon waits after its last client leaves; 0 => EphemeralGrace.
	EphemeralGrace time.Duration
	// LogRingFrames bounds the live log events kept for subscribers; 0 => logs.DefaultRingFrames.
	LogRingFrames int

	// Banner, if set, receives what the operator must see at start and is never logged: the gateway's
	// pairing code.
	Banner io.Writer
	// GatewayListen binds the gateway's TCP address; nil means net.Listen. Tests bind port 0 with it.
	GatewayListen func(network, addr string) (net.Listener, error)
	// GatewayReady, if set, is called with the gateway's address each time it binds.
	GatewayReady func(addr net.Addr, tls bool)
	// WSSListen binds the [wss] address; nil means net.Listen. WSSReady, if set, is called with its address.
	WSSListen func(network, addr string) (net.Listener, error)
	WSSReady  func(addr net.Addr)
	// LocalesBaseURL is where locales/fetch downloads upstream's tools and zerocode catalogues (zeroclaw
	// daemon passes UpstreamCatalogURL); "" downloads nothing: those catalogues are reported skipped.
	LocalesBaseURL string
}

// UpstreamCatalogURL is the raw-file root of upstream's repository, whose catalogues locales/fetch serves.
const UpstreamCatalogURL = "https://raw.githubusercontent.com/zeroclaw-labs/zeroclaw"

func (o Options) getenv(key string) string {
	for i := len(o.Environ) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(o.Environ[i], "=")
		if ok && k == key {
			return v
		}
	}
	return ""
}

// Run starts the daemon and blocks until ctx is cancelled, a shutdown is requested over RPC, or (ephemeral) the
// last client has left. Startup order: install lock → config → stores → listener → the legacy JSONL import in
// the background → sessions → server.
// Shutdown order: stop accepting → cancel turns and deny approvals → drain in-flight requests (DrainTimeout, 5.5 s by default, in all) →
// close connections (queued frames flushed) → close stores → remove the socket if it is still ours → release
// the install lock.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clk := clock.OrReal(opts.Clock)
	layout, err := install.Resolve(opts.ConfigDir, opts.getenv, opts.Home)
	if err != nil {
		return err
	}
	for _, w := range layout.Warnings {
		log.Warn(w, "component", "install")
	}
	endpoint := layout.Endpoint(opts.getenv)

	if !sharedInstall(opts.getenv) { // a test-only build may let two daemons share an install (share_e2e.go)
		lock, err := install.LockInstall(layout)
		if err != nil {
			var le *install.LockedError
			if errors.As(err, &le) {
				return &RunningError{PID: le.PID, Endpoint: endpoint}
			}
			return err
		}
		defer lock.Release()
	}

	// A legacy <install>/workspace is moved into the current layout before the config and stores are opened.
	// Moving files never changes config.toml (state.md §1): an older config stays as it is (it is migrated in
	// memory below), and a mark in the data dir says the layout is done.
	legacyVersion, err := config.SchemaVersionOf(layout.ConfigPath())
	cfgExists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("legacy layout not checked", "component", "install", "err", err)
	} else if legacyVersion < legacy.LayoutSchemaVersion && !legacy.Done(layout) {
		rep, err := legacy.Migrate(layout, legacyVersion, clk.Now())
		rep.Log(log)
		if err != nil {
			log.Warn("legacy workspace not migrated; the next start retries", "component", "install", "err", err)
		}
		// An old config.toml without a legacy workspace (none ever, or a crash after the migration removed it
		// but before the mark) is already in the current layout: mark it too, or a <install>/workspace made
		// later would be taken for the legacy one and moved away.
		if rep.Complete() || (!rep.Ran && err == nil && cfgExists) {
			if err := legacy.MarkDone(layout); err != nil {
				log.Warn("legacy layout migrated but not marked; the next start checks again", "component", "install", "err", err)
			}
		}
	}
	// A save interrupted by a crash leaves its temp file; with the install lock held no save is in progress.
	if removed, err := config.RemoveStaleTemps(layout.ConfigPath()); err != nil {
		log.Warn("could not remove stale config temp files", "component", "config", "err", err)
	} else if len(removed) > 0 {
		log.Info("removed stale config temp files", "component", "config", "count", len(removed))
	}
	created, err := config.EnsureDefault(layout.ConfigPath())
	if err != nil {
		return err
	}
	if created {
		log.Info("wrote default config", "component", "config", "path", layout.ConfigPath())
	}
	warnReadable(log, layout.ConfigPath(), layout.SecretKeyPath())
	// As upstream: entries that fail validation are disabled with a warning and the rest runs (config.OpenLenient).
	cfg, err := config.OpenLenient(layout.ConfigPath(), secrets.New(layout.SecretKeyPath()), opts.Environ, log.With("component", "config"))
	if err != nil {
		return err
	}

	// A signal during the start (ctx ends while stores open, after the socket exists) is a clean stop, exit 0:
	// each store step is a transaction, so what was cut is rolled back, and what opened is closed by the defers.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			log.Info("shutting down: signal during startup", "component", "daemon", "step_err", err)
			return nil
		}
		return err
	}
	st, err := openStores(ctx, layout, cfg.Current(), log)
	if err != nil {
		return stopped(err)
	}
	defer st.close(log)
	backend := sessionBackend(cfg.Current())
	cfg.OnChange(func(c *config.Config) {
		if b := sessionBackend(c); b != backend {
			log.Warn("channels.session_backend changed: it takes effect at the next start", "component", "store",
				"running", backend, "configured", b)
		}
	})

	events := newLogHub(layout, cfg, clk, opts.LogRingFrames, log)
	defer events.Close()
	metrics := gateway.NewMetrics()
	costs := newCostTracker(st.costs, cfg, clk, opts.NewID, events, metrics.Recorded)
	pm, err := newPairing(ctx, cfg, st.devices, clk, log)
	if err != nil {
		return stopped(err)
	}

	ln, err := localsock.Listen(endpoint)
	if err != nil {
		var ie *localsock.InUseError
		if errors.As(err, &ie) {
			return &RunningError{PID: ie.PID, Endpoint: endpoint}
		}
		return err
	}
	// The endpoint is ours: the legacy JSONL sessions move in while the daemon serves (stores.startImport).
	st.startImport(ctx, layout, clk.Now(), log)

	onPrune := prunesRecorder(layout, events, log)
	keeper := startStorageKeeper(ctx, clk, keeperOptions{DataDir: layout.DataDir, TracePath: filepath.Join(layout.StateDir(), "runtime-trace.jsonl"),
		Config: cfg.Current, OnPrune: onPrune, Now: clk.Now, Log: log})
	defer keeper.stop() // before the stores close (defers run last-in first-out)
	mem := openMemory(ctx, layout, cfg.Current, cfg.OnChange, clk.Now, log, onPrune)
	defer closeMemory(mem, log)
	bg, err := openBackground(ctx, layout, cfg, st, clk, opts.NewID, log)
	if err != nil {
		_ = ln.Close()
		return stopped(err)
	}
	mcpm := openMCP(cfg, log)
	defer mcpm.Close() // after the sessions' shutdown: no turn uses a server any more
	defer session.WaitEditorMCP()
	var d *daemon // the sop_* tools find the SOP engine through it, turn by turn
	sessions := session.NewManager(session.Options{
		Chat:        st.chat,
		Cost:        costs,
		Logs:        metricsTee{hub: events, m: metrics},
		Config:      cfg.Current,
		InstallRoot: layout.Root,
		DataDir:     layout.DataDir,
		Logger:      log,
		ACP:         st.acp,
		Clock:       clk,
		NewID:       opts.NewID,
		NewProvider: opts.NewProvider,
		Memory:      mem,
		Cron:        bg.tools,
		Delegate:    bg.deleg.ForAgent,
		MCP:         mcpTools(mcpm),
		EditorMCP:   editorMCP(log),
		SOPs:        func(agent string) tools.SOPs { return d.sopToolsFor(agent) },
	})
	if err := bg.start(ctx, cfg, sessions); err != nil {
		_ = ln.Close()
		return stopped(err)
	}
	// The SOP runtime after the stores and the sessions its steps run on; runs cut by the last exit resume here.
	sopRT := openSop(ctx, layout, opts.Home, cfg, sessions, clk, log)
	defer sopRT.close(ctx) // normally done already by drain, within the drain deadline
	// The chat channels after the sessions their turns run on; events a previous process recorded are resumed.
	chRT := openChannels(ctx, layout, cfg, st.chat, sessions, clk, log)
	defer chRT.close() // normally done already by drain
	hbRT := openHeartbeat(ctx, layout, cfg, sessions, st.chat, st.backend.heartbeatLeader(), heartbeatNotifier(opts.HeartbeatNotifier, chRT.notifier()), clk, opts.NewID, log)
	defer hbRT.close(log) // normally stopped already by drain; its history closes here
	if chRT != nil {
		metrics.WatchChannels(func() []api.ChannelStatus { return chRT.status(ctx) })
	}
	if hbRT != nil && hbRT.hb != nil {
		metrics.WatchHeartbeat(func() gateway.HeartbeatSample {
			s := hbRT.hb.Metrics()
			return gateway.HeartbeatSample{Enabled: s.Enabled, Runs: s.Runs, LastSuccess: s.LastSuccess, Deadman: s.Deadman}
		})
	}
	d = &daemon{
		bg:           bg,
		log:          log,
		ln:           ln,
		stop:         make(chan struct{}),
		cfg:          cfg,
		sessions:     sessions,
		mcpClient:    mcpm,
		stores:       st,
		frames:       jsonrpc.NewBudget(int64(cfg.Current().RPC.MaxInflightFrameBytes)),
		drainTimeout: cmp.Or(max(opts.DrainTimeout, 0), DrainTimeout),
		sop:          sopRT,
		sops:         sopRT.engine(),
		channels:     chRT,
		hb:           hbRT,
	}
	// The catalogues: the binary's, with what locales/fetch clients stored in data/ftl laid over them, read
	// when first needed (an idle daemon holds none).
	catalog := sync.OnceValue(func() *i18n.Catalog {
		c, errs := i18n.Open(filepath.Join(layout.DataDir, "ftl"))
		for _, e := range errs {
			log.Warn("catalogue entry ignored", "component", "i18n", "err", e)
		}
		return c
	})
	d.srv = rpc.New(rpc.Options{
		Logger: log.With("component", "rpc"),
		Info: rpc.Info{
			PID: os.Getpid(), UID: os.Getuid(), StartedAt: clk.Now(),
			ConfigDir: layout.Root, ConfigFile: layout.ConfigPath(), ConfigKind: configKind(layout, opts.Home),
			DataDir: layout.DataDir, Endpoint: endpoint,
		},
		Config:        cfg.Current,
		Shutdown:      d.requestStop,
		ConfigManager: cfg,
		Sessions:      sessions,
		MCPStatus:     mcpm.Status,
		Channels:      chRT.status,
		ChannelStates: chRT.states,
		Memory:        mem,
		Skills:        skills.NewCatalog(skills.CatalogOptions{Config: cfg.Current, InstallRoot: layout.Root, Now: clk.Now, Logger: log}),
		Personality:   workspace.NewPersonality(cfg.Current, layout.Root),
		FrameBudget:   d.frames,
		Clock:         clk,
		NewTUIID:      tuiIDs(opts.NewID),
		Cron:          bg.sched,
		Logs:          events,
		Costs:         costs,
		Pairing:       pm,
		Sops:          d.sops, // set before the server is built when [sop] runs an engine
		SopLibrary:    sopLibrary(cfg.Current, layout.Root, opts.Home, func() *sopRuntime { return d.sop }, log),

		Gateway:   func() *api.GatewayStatus { return d.gatewayStatus(opts.Ephemeral) },
		Sop:       sopRT.status,
		Storage:   st.backend.snapshot,
		Heartbeat: hbRT.hb,
		Doctor: doctorFor(layout, endpoint, opts.Environ, func() *api.GatewayStatus { return d.gatewayStatus(opts.Ephemeral) },
			func() *api.HandshakeOnly { return d.srv.HandshakeOnly() }, sopRT.status, mcpm.Status, hbRT.hb.Status, chRT.status, // called only once the server serves
			localeFor(catalog, cfg.Current, opts.Environ)),
		Locales: i18n.Fetcher{BaseURL: opts.LocalesBaseURL, Version: api.ServerVersion},
	})
	// The ACP endpoint (acp.md) is served through the same listen.Server: one connection limit, one ephemeral
	// count, one drain. A daemon that cannot take it still serves the native socket.
	d.acp = acp.New(acp.Options{Sessions: sessions, Config: cfg.Current, DaemonUID: os.Getuid(),
		Logger: log.With("component", "acp")})
	if d.acpLn, err = localsock.Listen(layout.ACPEndpoint()); err != nil {
		log.Warn("ACP endpoint not served", "component", "acp", "endpoint", layout.ACPEndpoint(), "err", err)
		d.acpLn = nil
	}
	d.conns = listen.New(listen.Options{
		MaxConns:       func() int { return d.cfg.Current().RPC.MaxLocalConnections },
		Ephemeral:      opts.Ephemeral,
		EphemeralGrace: opts.EphemeralGrace,
		Idle: func() {
			log.Info("last client left: ephemeral daemon exiting", "component", "daemon")
			d.requestStop()
		},
		DrainTimeout: opts.DrainTimeout,
		Drain:        d.drain,
		Abort:        d.abort,
		Settled:      returnMemory,
		// The owner's socket still accepts when a flood took every other fd (the gateway's cap keeps a reserve
		// too; this is the last one).
		SpareFD: true,
		Logger:  log,
	})
	d.mcpServer = newMCPServer(log)
	d.startGateway(ctx, opts, layout, events, pm, metrics, clk)
	log.Info("daemon listening", "component", "daemon", "endpoint", endpoint, "pid", os.Getpid(),
		"config_dir", layout.Root, "ephemeral", opts.Ephemeral, "acp_endpoint", layout.ACPEndpoint())
	events.Publish(logs.Entry{Category: logs.CategorySystem, Action: "start", Outcome: logs.OutcomeSuccess,
		Message: "daemon listening", Attributes: map[string]any{"pid": os.Getpid(), "ephemeral": opts.Ephemeral}})
	if opts.Ready != nil {
		opts.Ready(endpoint)
	}
	err = d.serve(ctx)
	events.Publish(logs.Entry{Category: logs.CategorySystem, Action: "complete", Outcome: logs.OutcomeSuccess, Message: "daemon stopped"})
	return err
}

// RunningError reports that another daemon owns this install or endpoint.
type RunningError struct {
	PID      int
	Endpoint string
}

func (e *RunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("another daemon (pid %d) serves %s", e.PID, e.Endpoint)
	}
	return fmt.Sprintf("another daemon serves %s", e.Endpoint)
}

// daemon is one running instance.
type daemon struct {
	mcpClient    *mcp.Manager // the MCP servers agents use (status and GET /api/tools)
	bg           *background  // scheduler and control plane
	log          *slog.Logger
	ln           *localsock.Listener
	acpLn        *localsock.Listener // nil when the ACP endpoint could not be taken
	conns        *listen.Server
	srv          *rpc.Server
	acp          *acp.Server
	mcpServer    *mcpserver.Server // /mcp on the gateway (the MCP client is internal/mcp)
	gw           *gateway.Server
	cfg          *config.Manager
	sessions     *session.Manager
	stores       *stores
	frames       *jsonrpc.Budget // the bytes of inbound frames in flight, shared by every connection
	drainTimeout time.Duration
	sops         *engine.Engine  // the SOP engine; nil when it is off
	sop          *sopRuntime     // the engine with its store, tick and triggers; nil when it is off
	channels     *channelRuntime // the chat channels; nil on the JSONL backend
	hb           *heartbeatRT    // the heartbeat (always made; idle while [heartbeat] is off)

	stopOnce sync.Once
	stop     chan struct{} // closed by requestStop
}

func (d *daemon) requestStop() { d.stopOnce.Do(func() { close(d.stop) }) }

func (d *daemon) limits() rpc.Limits {
	r := d.cfg.Current().RPC
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	return rpc.Limits{
		MaxFrameBytes:     r.MaxFrameBytes,
		InitializeTimeout: ms(r.InitializeTimeoutMS),
		FrameTimeout:      ms(r.FrameTimeoutMS),
		WriteTimeout:      ms(r.WriteTimeoutMS),
	}
}

// serve runs the listener until ctx ends or a stop is requested, then shuts down in the documented order (Run).
func (d *daemon) serve(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- d.conns.Serve(ctx, d.ln, d.serveConn) }()
	acpServed := make(chan error, 1)
	if d.acpLn != nil {
		go func() { acpServed <- d.conns.Serve(ctx, d.acpLn, d.serveACP) }()
	} else {
		acpServed <- nil
	}

	select {
	case <-ctx.Done():
		d.log.Info("shutting down: signal", "component", "daemon")
	case <-d.stop:
		d.log.Info("shutting down: requested", "component", "daemon")
	}
	// 1. Stop accepting. 2. Cancel turns, deny approvals, drain in-flight requests (d.drain). 3. End every
	// connection; each flushes the frames it has queued; past the drain deadline they are closed outright.
	// The gateway stops accepting at the same moment and drains its requests within the same deadline.
	gwDone := make(chan struct{})
	go func() {
		defer close(gwDone)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.drainTimeout)
		defer cancel()
		mcpDone := make(chan struct{})
		go func() { // an MCP session's stream is a request the gateway's Shutdown waits for
			defer close(mcpDone)
			d.closeMCP(sctx)
		}()
		if err := d.gw.Shutdown(sctx); err != nil {
			d.log.Warn("gateway requests cut at the drain deadline", "component", "gateway", "err", err)
		}
		<-mcpDone
	}()
	d.conns.Shutdown(ctx)
	<-gwDone
	if err := <-served; err != nil {
		d.log.Warn("serving the endpoint", "component", "daemon", "err", err)
	}
	if err := <-acpServed; err != nil {
		d.log.Warn("serving the ACP endpoint", "component", "daemon", "err", err)
	}
	d.frames.Close()
	// 4. Close the stores. 5. Remove the socket if it is still ours and release the endpoint lock; the install
	// lock is released last, by Run.
	d.stores.close(d.log)
	if err := d.ln.Close(); err != nil {
		d.log.Warn("closing endpoint", "component", "daemon", "err", err)
	}
	if d.acpLn != nil {
		if err := d.acpLn.Close(); err != nil {
			d.log.Warn("closing ACP endpoint", "component", "daemon", "err", err)
		}
	}
	d.log.Info("daemon stopped", "component", "daemon")
	return nil
}

// drain cancels running turns and denies pending approvals, so their prompts answer promptly, then waits for the
// requests in flight; ctx ends at the drain deadline, which covers both.
func (d *daemon) drain(ctx context.Context) {
	d.stores.cancelImport() // calls waiting for a legacy import's sessions go on
	// Channels first: no platform event is acknowledged any more, and their turns end before the sessions do.
	d.channels.close()
	// SOP runs stop before the turns are cancelled: steps in flight may finish within the drain deadline; one
	// cut after it stays in flight in runs.db and is marked interrupted at the next start (a cancelled turn
	// would read as the step failing).
	d.sop.close(ctx)
	d.hb.hb.Close() // a heartbeat task cut here is recorded as error
	d.bg.stop(ctx)  // scheduled jobs first: an agent job's turn ends before the sessions shut down
	d.sessions.Shutdown(ctx)
	d.srv.Drain(ctx)
	d.acp.Drain(ctx)
}

// returnMemory runs once a burst of connections has come and gone (listen.Options.Settled): the goroutine
// stacks the burst grew and the heap pages it freed stay with the process until the runtime's background
// scavenger returns them, slowly and only down to its heap goal, so a daemon that served hundreds of clients
// for a moment keeps megabytes it no longer uses. Two GCs (a GC shrinks each goroutine's stack at most by half,
// so the idle connections' stacks grown while serving a request come back to what their idle wait needs) and
// returning every free page cost a few milliseconds of CPU on this heap, at most once per
// listen.DefaultSettleEvery.
func returnMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// abort ends every connection of both protocols outright (past the drain deadline).
func (d *daemon) abort() {
	d.srv.CloseAll()
	d.acp.CloseAll()
}

// serveACP serves one admitted ACP connection (acp.md) with the limits in force when it was accepted.
func (d *daemon) serveACP(ctx context.Context, nc net.Conn) {
	lim := d.limits()
	cred, err := localsock.Peer(nc)
	if err != nil {
		cred = localsock.PeerCred{PID: -1, UID: -1, Label: "unix:unknown"}
		d.log.Warn("peer credentials unavailable", "component", "acp", "err", err)
	}
	_ = d.acp.ServeConn(ctx, nc, acp.PeerInfo{UID: cred.UID, Label: cred.Label, Transport: transportOf(cred)},
		acp.Limits{MaxFrameBytes: lim.MaxFrameBytes, FrameTimeout: lim.FrameTimeout, WriteTimeout: lim.WriteTimeout})
}

// serveConn serves one admitted connection with the limits in force when it was accepted.
func (d *daemon) serveConn(ctx context.Context, nc net.Conn) {
	lim := d.limits()
	d.frames.SetLimit(int64(d.cfg.Current().RPC.MaxInflightFrameBytes))
	cred, err := localsock.Peer(nc)
	if err != nil {
		// Unknown is never uid 0: such a peer matches no user and is not the operator.
		cred = localsock.PeerCred{PID: -1, UID: -1, Label: "unix:unknown"}
		d.log.Warn("peer credentials unavailable", "component", "daemon", "err", err)
	}
	info := rpc.PeerInfo{PID: cred.PID, UID: cred.UID, Label: cred.Label, Transport: transportOf(cred),
		DaemonChild: localsock.DescendantOf(cred.PID, os.Getpid())}
	_ = d.srv.ServeConn(ctx, nc, info, lim)
}

// tuiIDs derives tui ids from newID, or leaves them to rpc (nil) when newID is nil.
func tuiIDs(newID func() string) func() string {
	if newID == nil {
		return nil
	}
	return func() string { return "tui-" + newID() }
}

func transportOf(c localsock.PeerCred) auth.Transport {
	if strings.HasPrefix(c.Label, "pipe:") {
		return auth.TransportPipe
	}
	return auth.TransportUnix
}

// configKind classifies the install for status.config_kind as upstream does: under the system's temporary
// directory, the default ~/.zeroclaw, or another one chosen with --config-dir or the environment.
func configKind(layout install.Layout, home string) string {
	if rel, err := filepath.Rel(os.TempDir(), layout.Root); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return api.ConfigKindTemporary
	}
	if home != "" && filepath.Clean(layout.Root) == filepath.Join(home, install.DefaultDirName) {
		return api.ConfigKindDefault
	}
	return api.ConfigKindCustom
}

// warnReadable warns about each of paths (config.toml, .secret_key) that other users may read: the secrets in
// the one and the key to them in the other. It only stats them (a mode check opens nothing).
func warnReadable(log *slog.Logger, paths ...string) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || runtime.GOOS == "windows" {
			continue
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			log.Warn("file is readable by other users: its secrets are exposed", "component", "install", "path", p,
				"mode", fmt.Sprintf("%04o", perm), "fix", fmt.Sprintf("chmod 600 %s", p))
		}
	}
}
