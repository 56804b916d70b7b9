package mcp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Bounds on what a server can make the daemon hold.
const (
	maxLineBytes   = 4 << 20 // one stdio JSON-RPC line (upstream's cap)
	maxEventBytes  = 4 << 20 // one SSE event
	maxStderrBytes = 4 << 10 // the tail of a child's stderr kept for its status
	maxCACertBytes = 1 << 20
	closeGrace     = 2 * time.Second // after stdin EOF, before SIGKILL (upstream's)
	waitDelay      = time.Second     // after the child exits, for a grandchild holding its pipes
)

// transportFor builds the SDK transport of one server. environ is the daemon's environment (stdio children
// inherit it, with the server's env on top, as upstream does).
func transportFor(s config.MCPServerConfig, environ []string, shim string, proc *procInfo) (sdk.Transport, error) {
	switch s.TransportOrDefault() {
	case config.MCPStdio:
		if !shimSupported {
			shim = ""
		}
		return &stdioTransport{cfg: s, environ: environ, shim: shim, info: proc}, nil
	case config.MCPHTTP, config.MCPSSE:
		hc, err := httpClient(s, proc)
		if err != nil {
			return nil, err
		}
		if s.TransportOrDefault() == config.MCPSSE {
			return &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: maxEventBytes}, nil
		}
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1, MaxEventSize: maxEventBytes}, nil
	}
	return nil, fmt.Errorf("mcp: server %s: unknown transport %q", s.Name, s.Transport)
}

// httpClient sends the server's headers with every request to the server's own origin (never to another host
// a redirect or an advertised SSE endpoint points at: they may hold credentials) and trusts its extra CA
// certificate; with one, every request must be https (upstream forces it for the URL and the SSE endpoint).
// A refusal is also kept in proc: the SDK's SSE transport reports a failed POST only as its closed connection,
// so the status shows the refusal as the cause instead.
func httpClient(s config.MCPServerConfig, proc *procInfo) (*http.Client, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if s.TLSCACertPath != "" {
		pool, err := caPool(s.TLSCACertPath)
		if err != nil {
			return nil, fmt.Errorf("mcp: server %s: tls_ca_cert_path: %w", s.Name, err)
		}
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil, fmt.Errorf("mcp: server %s: url: %w", s.Name, err)
	}
	return &http.Client{Transport: headerTransport{base: base, headers: s.Headers, origin: origin(u), httpsOnly: s.TLSCACertPath != "", proc: proc}}, nil
}

// origin is scheme://host[:port], lower-cased, with the scheme's default port made explicit.
func origin(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

func caPool(path string) (*x509.CertPool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxCACertBytes {
		return nil, errors.New("must be a regular file of at most 1 MiB")
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no PEM certificate in the file")
	}
	return pool, nil
}

type headerTransport struct {
	base      http.RoundTripper
	headers   map[string]string
	origin    string // the configured URL's: the only one the headers go to
	httpsOnly bool
	proc      *procInfo // keeps the last refusal; nil in tests that build a transport alone
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.httpsOnly && r.URL.Scheme != "https" {
		err := fmt.Errorf("mcp: %s refused: tls_ca_cert_path is set, so every request must use https", r.URL.Redacted())
		if h.proc != nil {
			h.proc.setRefused(err)
		}
		return nil, err
	}
	if len(h.headers) > 0 && origin(r.URL) == h.origin {
		r = r.Clone(r.Context())
		keys := make([]string, 0, len(h.headers))
		for k := range h.headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			r.Header.Set(k, h.headers[k])
		}
	}
	resp, err := h.base.RoundTrip(r)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		// The SDK reads a JSON answer whole: bound it as one stdio line is (an event stream is bounded per event).
		resp.Body = &capBody{rc: resp.Body, left: maxLineBytes}
	}
	return resp, err
}

// capBody fails a read past left bytes, so a server's endless JSON answer is refused, not buffered.
type capBody struct {
	rc   io.ReadCloser
	left int
}

func (c *capBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("mcp: HTTP response larger than %d bytes", maxLineBytes)
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= n
	return n, err
}

func (c *capBody) Close() error { return c.rc.Close() }

// procInfo is what a server's status shows of its current child.
type procInfo struct {
	mu      sync.Mutex
	pid     int
	stderr  tail
	refused error // the last request refused by policy (https-only), for the status's cause
}

func (p *procInfo) setPID(pid int) {
	p.mu.Lock()
	p.pid = pid
	p.mu.Unlock()
}

// setRefused keeps a request the transport refused by policy; takeRefused returns it once and forgets it.
func (p *procInfo) setRefused(err error) {
	p.mu.Lock()
	p.refused = err
	p.mu.Unlock()
}

func (p *procInfo) takeRefused() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.refused
	p.refused = nil
	return err
}

// PID returns the current child's pid, 0 when none runs.
func (p *procInfo) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// tail keeps the last maxStderrBytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - maxStderrBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// stdioTransport runs the server as a child in its own process group, with Pdeathsig on Linux, and reaps it:
// Close sends EOF, waits closeGrace, then kills the whole group, and always waits for the child. With a shim
// (Linux) the child is the keeper (shim_linux.go), which runs the server and takes its descendants with it.
type stdioTransport struct {
	cfg     config.MCPServerConfig
	environ []string
	shim    string
	info    *procInfo
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	cmd := exec.Command(t.cfg.Command, t.cfg.Args...)
	if t.shim != "" {
		// The command is resolved here, with the daemon's PATH, as without the keeper (and a missing one
		// fails the same way, before anything starts).
		path, err := exec.LookPath(t.cfg.Command)
		if err != nil {
			return nil, fmt.Errorf("mcp: server %s: start %s: %w", t.cfg.Name, t.cfg.Command, err)
		}
		cmd = exec.Command(t.shim, append([]string{path}, t.cfg.Args...)...)
	}
	env := withoutShimEnv(t.environ)
	keys := make([]string, 0, len(t.cfg.Env))
	for k := range t.cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+t.cfg.Env[k])
	}
	if t.shim != "" {
		env = append(env, ShimEnv+"="+strconv.Itoa(os.Getpid()))
	}
	cmd.Env = env
	cmd.Stderr = &t.info.stderr
	cmd.WaitDelay = waitDelay
	setProcAttr(cmd, t.shim != "")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := startCmd(cmd); err != nil {
		return nil, fmt.Errorf("mcp: server %s: start %s: %w", t.cfg.Name, t.cfg.Command, err)
	}
	t.info.setPID(cmd.Process.Pid)
	exited := make(chan struct{})
	go func() { // the child's one waiter: it reaps the child and kills what is left of its group
		_ = waitAndKillGroup(cmd)
		t.info.setPID(0)
		close(exited)
	}()
	inner, err := (&sdk.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: maxLineBytes}).Connect(ctx)
	if err != nil {
		_ = stdin.Close()
		killGroup(cmd)
		<-exited
		return nil, err
	}
	return &childConn{Connection: inner, stdin: stdin, cmd: cmd, exited: exited, shim: t.shim != ""}, nil
}

// childConn is the connection to a child; closing it ends the child.
type childConn struct {
	sdk.Connection
	stdin  io.Closer
	cmd    *exec.Cmd
	exited chan struct{}
	shim   bool // cmd is the keeper: SIGTERM makes it end the server's group and its adopted descendants
	once   sync.Once
}

func (c *childConn) Read(ctx context.Context) (msg jsonrpc.Message, err error) {
	msg, err = c.Connection.Read(ctx)
	if err != nil {
		select { // a child that is gone: say so rather than "file already closed"
		case <-c.exited:
			err = fmt.Errorf("mcp: the server process exited: %w", err)
		default:
		}
	}
	return msg, err
}

func (c *childConn) Close() error {
	c.once.Do(func() {
		_ = c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(closeGrace):
			if c.shim { // the keeper kills and reaps the server's descendants; SIGKILL only if it does not end
				_ = c.cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-c.exited:
				case <-time.After(closeGrace):
				}
			}
			killGroup(c.cmd)
			<-c.exited
		}
		_ = c.Connection.Close()
	})
	<-c.exited
	return nil
}
