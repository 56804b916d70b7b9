// Package rpctest runs a real daemon in-process on a temporary install and socket, and drives it with raw NDJSON
// clients and golden transcripts. It is imported only by tests.
package rpctest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/daemon"
	"github.com/zeroclaw-go/zeroclaw/internal/localsock"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// Daemon is a daemon running in this process on a temporary install.
type Daemon struct {
	ConfigDir string
	Endpoint  string
	cancel    context.CancelFunc
	exited    chan struct{} // closed when Run has returned; err is set before
	err       error         // what Run returned
	label     string        // the pprof label value every goroutine of this daemon carries

	gwMu   sync.Mutex // gwMu guards the fields below
	gwAddr net.Addr   // the gateway's address, nil until it binds
	gwTLS  bool
	gwBind int      // how many times the gateway bound
	wss    net.Addr // the [wss] listener's address, nil until it binds
}

// WSSAddr is the address of the daemon's [wss] listener; the test fails when it is not listening.
func (d *Daemon) WSSAddr(t testing.TB) string {
	t.Helper()
	d.gwMu.Lock()
	defer d.gwMu.Unlock()
	if d.wss == nil {
		t.Fatal("rpctest: the wss listener is not listening")
	}
	return d.wss.String()
}

// GatewayURL is the base URL of the daemon's gateway ("http://127.0.0.1:<port>"); the test fails when the
// gateway is not listening. The harness always binds the gateway on a port the kernel picks.
func (d *Daemon) GatewayURL(t testing.TB) string {
	t.Helper()
	d.gwMu.Lock()
	defer d.gwMu.Unlock()
	if d.gwAddr == nil {
		t.Fatal("rpctest: the gateway is not listening")
	}
	scheme := "http"
	if d.gwTLS {
		scheme = "https"
	}
	return scheme + "://" + d.gwAddr.String()
}

// GatewayBinds is how many times the gateway has bound a listener (1 after start; a reload that changed the
// bind adds one).
func (d *Daemon) GatewayBinds() int {
	d.gwMu.Lock()
	defer d.gwMu.Unlock()
	return d.gwBind
}

// Option adjusts a test daemon before it starts.
type Option func(*options)

type options struct {
	config      string
	ephemeral   bool
	environ     []string
	logger      *slog.Logger
	clock       clock.Clock
	newID       func() string
	newProvider session.ProviderFactory
	logRing     int
	banner      io.Writer
	drain       time.Duration
}

// WithConfig writes toml as config.toml before the daemon starts (instead of the default config).
func WithConfig(toml string) Option { return func(o *options) { o.config = toml } }

// WithEphemeral starts the daemon in ephemeral mode.
func WithEphemeral() Option { return func(o *options) { o.ephemeral = true } }

// WithLogger gives the daemon a logger (by default it logs nothing), so tests can check what it logs.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock gives the daemon a clock, typically a clocktest.Manual the test advances by hand.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithNewID gives the daemon its id source (sessions, turns, approvals, cost records, tui ids).
func WithNewID(f func() string) Option { return func(o *options) { o.newID = f } }

// WithNewProvider replaces the daemon's provider constructor.
func WithNewProvider(f session.ProviderFactory) Option { return func(o *options) { o.newProvider = f } }

// WithLogRing bounds the live log events the daemon keeps for subscribers.
func WithLogRing(frames int) Option { return func(o *options) { o.logRing = frames } }

// WithBanner gives the daemon the writer its start banner (the pairing code) goes to.
func WithBanner(w io.Writer) Option { return func(o *options) { o.banner = w } }

// WithDrainTimeout bounds the daemon's shutdown drain (daemon.DrainTimeout, 5.5 s, by default), so a test
// that shuts down with a stalled client does not wait the real deadline.
func WithDrainTimeout(d time.Duration) Option { return func(o *options) { o.drain = d } }

// WithEnv adds environment variables ("K=V") to the daemon's environment.
func WithEnv(kv ...string) Option { return func(o *options) { o.environ = append(o.environ, kv...) } }

// ShortTempDir returns a short-lived directory with a short path (Unix socket paths are limited to ~108 bytes).
func ShortTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "zc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Start runs a daemon on a fresh temporary install and waits until its socket accepts connections. It is
// stopped at the end of the test, and the test fails if a goroutine the daemon started outlives it
// (CheckNoGoroutines).
func Start(t testing.TB, opts ...Option) *Daemon {
	t.Helper()
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return StartOn(t, cfgDir, opts...)
}

// StartOn runs a daemon on an existing install, typically one a stopped Daemon left behind (its ConfigDir), so
// tests can restart a daemon and check what survived. The endpoint is <parent of configDir>/d.sock, the same
// one Start chose. The config on disk is kept unless WithConfig is given; it is stopped at the end of the test.
func StartOn(t testing.TB, configDir string, opts ...Option) *Daemon {
	t.Helper()
	var o options
	for _, fn := range opts {
		fn(&o)
	}
	if o.config != "" {
		if err := os.WriteFile(filepath.Join(configDir, "config.toml"), []byte(o.config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Dir(configDir)
	endpoint := filepath.Join(root, "d.sock")
	ctx, cancel := context.WithCancel(context.Background())
	d := &Daemon{ConfigDir: configDir, Endpoint: endpoint, cancel: cancel, exited: make(chan struct{}),
		label: strconv.FormatInt(daemonSeq.Add(1), 10)}
	ready := make(chan struct{})
	environ := append([]string{"ZEROCLAW_SOCKET=" + endpoint}, o.environ...)
	go pprof.Do(ctx, pprof.Labels(daemonLabel, d.label), func(ctx context.Context) {
		defer close(d.exited)
		d.err = daemon.Run(ctx, daemon.Options{
			ConfigDir:     configDir,
			Ephemeral:     o.ephemeral,
			Environ:       environ,
			Home:          root,
			Logger:        o.logger,
			Clock:         o.clock,
			NewID:         o.newID,
			NewProvider:   o.newProvider,
			LogRingFrames: o.logRing,
			DrainTimeout:  o.drain,
			Ready:         func(string) { close(ready) },
			Banner:        o.banner,
			GatewayListen: listenPortZero,
			GatewayReady: func(addr net.Addr, tls bool) {
				d.gwMu.Lock()
				d.gwAddr, d.gwTLS = addr, tls
				d.gwBind++
				d.gwMu.Unlock()
			},
			WSSListen: listenPortZero,
			WSSReady: func(addr net.Addr) {
				d.gwMu.Lock()
				d.wss = addr
				d.gwMu.Unlock()
			},
		})
	})
	select {
	case <-ready:
	case <-d.exited:
		cancel()
		t.Fatalf("daemon did not start on %s: %v", configDir, d.err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("daemon did not become ready within 20s")
	}
	t.Cleanup(func() { d.CheckNoGoroutines(t) })
	return d
}

// listenPortZero binds the configured host on a port the kernel picks, so test daemons never take 42617 or
// collide with each other.
func listenPortZero(network, addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return net.Listen(network, net.JoinHostPort(host, "0"))
}

// Stop cancels the daemon and waits for Run to return; it returns what Run returned. It may be called any
// number of times, also after the daemon stopped on its own, and each call returns the same result.
func (d *Daemon) Stop() error {
	d.cancel()
	select {
	case <-d.exited:
		return d.err
	case <-time.After(15 * time.Second):
		return errors.New("rpctest: daemon did not stop within 15s")
	}
}

// Done returns a channel that receives what Run returned once it has returned (e.g. an ephemeral exit or a
// requested shutdown) and is then closed. Each call gets its own channel, so Done, Err and Stop may all be used
// on one daemon without taking the result from each other.
func (d *Daemon) Done() <-chan error {
	ch := make(chan error, 1)
	go func() {
		<-d.exited
		ch <- d.err
		close(ch)
	}()
	return ch
}

// Exited is closed once Run has returned.
func (d *Daemon) Exited() <-chan struct{} { return d.exited }

// Err is what Run returned, or nil while it runs.
func (d *Daemon) Err() error {
	select {
	case <-d.exited:
		return d.err
	default:
		return nil
	}
}

// Client is the raw NDJSON test client (package ndjson) on a connection to the daemon.
type Client = ndjson.Client

// Dial connects a raw client to the daemon.
func (d *Daemon) Dial(t testing.TB) *Client {
	t.Helper()
	return DialEndpoint(t, d.Endpoint)
}

// DialEndpoint connects a raw client to an endpoint (a Unix socket or, on Windows, a named pipe); the
// connection is closed when the test ends.
func DialEndpoint(t testing.TB, endpoint string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, err := localsock.Dial(ctx, endpoint)
	if err != nil {
		t.Fatalf("dial %s: %v", endpoint, err)
	}
	t.Cleanup(func() { nc.Close() })
	return ndjson.New(t, nc)
}
