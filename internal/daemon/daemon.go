// Package daemon is the composition root: it resolves the install, loads the config, takes the ownership locks,
// opens the stores, starts the listeners and owns the shutdown order.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/rpc"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// DrainTimeout is how long shutdown waits for in-flight requests before closing connections (protocol.md §2.1).
const DrainTimeout = 5500 * time.Millisecond

// EphemeralGrace is how long an ephemeral daemon waits after its last client leaves (protocol.md §9).
const EphemeralGrace = time.Second

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

	// Ready, if set, is called once the endpoint accepts connections.
	Ready func(endpoint string)
}

func (o Options) getenv(key string) string {
	for i := len(o.Environ) - 1; i >= 0; i-- {
		k, v, ok := cutEnv(o.Environ[i])
		if ok && k == key {
			return v
		}
	}
	return ""
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}

// Run starts the daemon and blocks until ctx is cancelled, a shutdown is requested over RPC, or (ephemeral) the
// last client has left. Startup order: install lock → config → stores → listener → sessions → server.
// Shutdown order: stop accepting → cancel turns and deny approvals → drain in-flight requests (5.5 s in all) →
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

	lock, err := install.LockInstall(layout)
	if err != nil {
		var le *install.LockedError
		if errors.As(err, &le) {
			return &RunningError{PID: le.PID, Endpoint: endpoint}
		}
		return err
	}
	defer lock.Release()

	// A legacy <install>/workspace is moved into the current layout before the config and stores are opened.
	legacyVersion, err := config.SchemaVersionOf(layout.ConfigPath())
	cfgExists := err == nil
	migrated := false
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("legacy layout not checked", "component", "install", "err", err)
	} else if legacyVersion < install.LayoutSchemaVersion {
		rep, err := install.MigrateLegacy(layout, legacyVersion, clk.Now())
		rep.Log(log)
		if err != nil {
			log.Warn("legacy workspace not migrated; the next start retries", "component", "install", "err", err)
		}
		// An old config.toml without a legacy workspace (none ever, or a crash after the migration removed it
		// but before the stamp) is already in the current layout: stamp it too, or a <install>/workspace made
		// later would be taken for the legacy one and moved away.
		migrated = rep.Complete() || (!rep.Ran && err == nil && cfgExists)
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
	cfg, err := config.Open(layout.ConfigPath(), secrets.New(layout.SecretKeyPath()), opts.Environ, log.With("component", "config"))
	if err != nil {
		return err
	}
	if migrated {
		if _, err := cfg.Set(ctx, "schema_version", json.RawMessage(strconv.Itoa(install.LayoutSchemaVersion)), nil); err != nil {
			log.Warn("legacy workspace migrated, schema_version not stamped", "component", "install", "err", err)
		} else {
			log.Info("legacy workspace migrated: schema_version stamped", "component", "install")
		}
	}

	st, err := openStores(ctx, layout, cfg.Current(), clk.Now(), log)
	if err != nil {
		return err
	}
	defer st.close(log)

	ln, err := install.Listen(endpoint)
	if err != nil {
		var ie *install.InUseError
		if errors.As(err, &ie) {
			return &RunningError{PID: ie.PID, Endpoint: endpoint}
		}
		return err
	}

	sessions := session.NewManager(session.Options{
		Chat:        st.chat,
		Costs:       st.costs,
		Config:      cfg.Current,
		InstallRoot: layout.Root,
		Logger:      log,
		Clock:       clk,
		NewID:       opts.NewID,
		NewProvider: opts.NewProvider,
	})
	d := &daemon{
		log:       log,
		ln:        ln,
		ephemeral: opts.Ephemeral,
		stop:      make(chan struct{}),
		cfg:       cfg,
		sessions:  sessions,
		stores:    st,
		frames:    jsonrpc.NewBudget(int64(cfg.Current().RPC.MaxInflightFrameBytes)),
	}
	d.srv = rpc.New(rpc.Options{
		Logger: log.With("component", "rpc"),
		Info: rpc.Info{
			PID: os.Getpid(), UID: os.Getuid(), StartedAt: clk.Now(),
			ConfigDir: layout.Root, DataDir: layout.DataDir, Endpoint: endpoint,
		},
		Config:        cfg.Current,
		Shutdown:      d.requestStop,
		ConfigManager: cfg,
		Sessions:      sessions,
		FrameBudget:   d.frames,
		Clock:         clk,
		NewTUIID:      tuiIDs(opts.NewID),
	})
	log.Info("daemon listening", "component", "daemon", "endpoint", endpoint, "pid", os.Getpid(),
		"config_dir", layout.Root, "ephemeral", opts.Ephemeral)
	if opts.Ready != nil {
		opts.Ready(endpoint)
	}
	return d.serve(ctx)
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
	log       *slog.Logger
	ln        *install.Listener
	srv       *rpc.Server
	cfg       *config.Manager
	sessions  *session.Manager
	stores    *stores
	frames    *jsonrpc.Budget // the bytes of inbound frames in flight, shared by every connection
	ephemeral bool

	stopOnce sync.Once
	stop     chan struct{} // closed by requestStop

	mu      sync.Mutex // mu guards the fields below
	clients int        // open connections
	seen    bool       // at least one client ever connected
	idle    *time.Timer
	conns   sync.WaitGroup
}

func (d *daemon) requestStop() { d.stopOnce.Do(func() { close(d.stop) }) }

func (d *daemon) limits() (rpc.Limits, int) {
	r := d.cfg.Current().RPC
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	return rpc.Limits{
		MaxFrameBytes:     r.MaxFrameBytes,
		InitializeTimeout: ms(r.InitializeTimeoutMS),
		FrameTimeout:      ms(r.FrameTimeoutMS),
		WriteTimeout:      ms(r.WriteTimeoutMS),
	}, r.MaxLocalConnections
}

func (d *daemon) serve(ctx context.Context) error {
	connCtx, cancelConns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConns()
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		d.acceptLoop(connCtx)
	}()

	select {
	case <-ctx.Done():
		d.log.Info("shutting down: signal", "component", "daemon")
	case <-d.stop:
		d.log.Info("shutting down: requested", "component", "daemon")
	}

	// 1. Stop accepting.
	d.ln.StopAccepting()
	<-acceptDone
	// 2. Cancel running turns and deny pending approvals, so their prompts answer promptly. One 5.5 s budget
	// covers this and the drain.
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
	defer cancel()
	d.sessions.Shutdown(drainCtx)
	// 3. Drain: let in-flight requests finish, then end every connection; each flushes the frames it has queued.
	d.srv.Drain(drainCtx)
	cancelConns()
	if !waitGroupDone(drainCtx, &d.conns) {
		d.log.Warn("drain deadline passed: closing connections", "component", "daemon")
		d.srv.CloseAll()
		d.conns.Wait()
	}
	d.frames.Close()
	// 4. Close the stores. 5. Remove the socket if it is still ours and release the endpoint lock; the install
	// lock is released last, by Run.
	d.stores.close(d.log)
	if err := d.ln.Close(); err != nil {
		d.log.Warn("closing endpoint", "component", "daemon", "err", err)
	}
	d.log.Info("daemon stopped", "component", "daemon")
	return nil
}

func (d *daemon) acceptLoop(ctx context.Context) {
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			d.log.Warn("accept failed", "component", "daemon", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		lim, maxConns := d.limits()
		d.frames.SetLimit(int64(d.cfg.Current().RPC.MaxInflightFrameBytes))
		if !d.admit(maxConns) {
			d.conns.Add(1)
			go func() {
				defer d.conns.Done()
				defer nc.Close()
				if err := jsonrpc.WriteRefusal(nc, jsonrpc.NewError(api.CodeConnectionLimitReached,
					fmt.Sprintf("Connection limit reached (%d)", maxConns),
					map[string]any{"reason": "connection_limit", "limit": maxConns})); err == nil {
					lingerRefused(nc)
				}
			}()
			continue
		}
		d.conns.Add(1)
		go func() {
			defer d.conns.Done()
			defer d.release()
			cred, err := install.Peer(nc)
			if err != nil {
				// Unknown is never uid 0: such a peer matches no user and is not the operator.
				cred = install.PeerCred{PID: -1, UID: -1, Label: "unix:unknown"}
				d.log.Warn("peer credentials unavailable", "component", "daemon", "err", err)
			}
			info := rpc.PeerInfo{PID: cred.PID, UID: cred.UID, Label: cred.Label, Transport: transportOf(cred)}
			_ = d.srv.ServeConn(ctx, nc, info, lim)
		}()
	}
}

// A refused connection is half-closed and its input discarded for at most refusalLinger and refusalLingerBytes
// before the socket closes: closing a socket with unread input (the client's initialize, typically) resets the
// connection, and the client would see a reset instead of the refusal frame followed by EOF.
const (
	refusalLinger      = time.Second
	refusalLingerBytes = 1 << 20
)

func lingerRefused(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = nc.SetReadDeadline(time.Now().Add(refusalLinger))
	_, _ = io.Copy(io.Discard, io.LimitReader(nc, refusalLingerBytes))
}

// tuiIDs derives tui ids from newID, or leaves them to rpc (nil) when newID is nil.
func tuiIDs(newID func() string) func() string {
	if newID == nil {
		return nil
	}
	return func() string { return "tui-" + newID() }
}

func transportOf(c install.PeerCred) auth.Transport {
	if strings.HasPrefix(c.Label, "pipe:") {
		return auth.TransportPipe
	}
	return auth.TransportUnix
}

// admit counts a new connection, refusing it past the limit. A connection cancels a pending ephemeral exit.
func (d *daemon) admit(max int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if max > 0 && d.clients >= max {
		return false
	}
	d.clients++
	d.seen = true
	if d.idle != nil {
		d.idle.Stop()
		d.idle = nil
	}
	return true
}

// release uncounts a closed connection; in ephemeral mode the last one arms the exit timer.
func (d *daemon) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clients--
	if d.ephemeral && d.clients == 0 && d.seen {
		var t *time.Timer
		t = time.AfterFunc(EphemeralGrace, func() {
			d.mu.Lock()
			// Only the timer still armed may stop the daemon: an older one whose callback was already waiting
			// for mu when a client came and went must not cut the new grace period short.
			still := d.clients == 0 && d.idle == t
			d.mu.Unlock()
			if still {
				d.log.Info("last client left: ephemeral daemon exiting", "component", "daemon")
				d.requestStop()
			}
		})
		d.idle = t
	}
}

// waitGroupDone waits for wg until ctx ends; it reports whether wg finished.
func waitGroupDone(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
