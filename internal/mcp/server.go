package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// State is a server's lifecycle state, as status shows it (api.MCPServerStatus.State).
type State = string

// States.
const (
	StateIdle     State = "idle"     // lazy, not started yet
	StateStarting State = "starting" // starting or reconnecting
	StateReady    State = "ready"    // connected, tools listed
	StateBackoff  State = "backoff"  // crashed or failed to start; retried after a delay
	StateStopped  State = "stopped"  // stopped (reload, shutdown, session end)
)

// Bounds on what a server's lists can make the daemon hold.
const (
	maxTools      = 512 // tools kept per server
	maxListPages  = 32  // tools/list pages followed
	maxSchemaSize = 64 << 10
	maxDescBytes  = 4 << 10
	stableAfter   = time.Minute // a connection that lasted this long resets the backoff
)

// server supervises one configured MCP server: it connects, lists the tools, waits for the connection to
// end and, unless stopped, reconnects with exponential backoff. mu guards the fields below it.
type server struct {
	cfg     config.MCPServerConfig
	key     string // the config it was built from: a change means a new server
	m       *Manager
	cancel  context.CancelFunc
	done    chan struct{} // closed when the supervisor returned
	first   chan struct{} // closed after the first connect attempt ended (either way)
	proc    procInfo
	started bool
	// scrubFn removes the server's secrets; built once (the config of a server never changes).
	scrubOnce sync.Once
	scrubFn   func(string) string

	mu        sync.Mutex
	state     State
	sess      *sdk.ClientSession
	tools     []toolEntry
	lastErr   string
	restarts  int
	connected time.Time
	// refreshing: a tools/list after list_changed runs; refreshAgain: another notification came meanwhile.
	refreshing, refreshAgain bool
	// connCancel ends the current connection's context (called when the connection is over).
	connCancel context.CancelFunc
}

func newServer(m *Manager, cfg config.MCPServerConfig, key string) *server {
	return &server{cfg: cfg, key: key, m: m, state: StateIdle, done: make(chan struct{}), first: make(chan struct{})}
}

// start runs the supervisor once; later calls do nothing. The caller holds m.mu.
func (s *server) start() {
	if s.started {
		return
	}
	s.started = true
	ctx, cancel := context.WithCancel(context.WithoutCancel(s.m.base))
	s.cancel = cancel
	s.mu.Lock() // not set(): the caller holds m.mu, which changed() takes
	s.state = StateStarting
	s.mu.Unlock()
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		defer close(s.done)
		s.supervise(ctx)
	}()
}

// stop ends the supervisor and the connection (the child is reaped) and waits for both.
func (s *server) stop() {
	if !s.started {
		s.set(StateStopped, "")
		return
	}
	s.cancel()
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		_ = sess.Close()
	}
	<-s.done
	s.set(StateStopped, "")
}

func (s *server) set(st State, errText string) {
	s.mu.Lock()
	s.state = st
	if errText != "" {
		s.lastErr = errText
	}
	if st != StateReady {
		s.tools, s.sess = nil, nil
	}
	s.mu.Unlock()
	s.m.changed()
}

func (s *server) supervise(ctx context.Context) {
	backoff := s.m.o.BackoffMin
	firstDone := false
	markFirst := func() {
		if !firstDone {
			firstDone = true
			close(s.first)
		}
	}
	defer markFirst()
	for {
		sess, err := s.connect(ctx)
		if ctx.Err() != nil {
			if sess != nil {
				_ = sess.Close()
			}
			return
		}
		if err == nil {
			markFirst()
			s.m.log.Info("mcp server connected", "component", "mcp", "mcp_server", s.cfg.Name, "tools", s.toolCount())
			werr := sess.Wait()
			if ctx.Err() != nil {
				return
			}
			_ = sess.Close() // reaps the child of a connection that ended by itself
			s.mu.Lock()
			if s.connCancel != nil {
				s.connCancel()
			}
			s.mu.Unlock()
			s.mu.Lock()
			stable := time.Since(s.connected) >= stableAfter
			s.mu.Unlock()
			if stable {
				backoff = s.m.o.BackoffMin
			}
			err = fmt.Errorf("connection lost: %v", werr)
		}
		markFirst()
		msg := s.scrub(err.Error())
		if st := strings.TrimSpace(s.proc.stderr.String()); st != "" && s.cfg.TransportOrDefault() == config.MCPStdio {
			msg += " (stderr: " + s.scrub(lastLine(st)) + ")"
		}
		s.m.log.Warn("mcp server down; retrying", "component", "mcp", "mcp_server", s.cfg.Name, "err", msg, "retry_in", backoff)
		s.mu.Lock()
		s.restarts++
		s.mu.Unlock()
		s.set(StateBackoff, msg)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, s.m.o.BackoffMax)
		s.set(StateStarting, "")
	}
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return truncate(s, 512)
}

// connect starts the transport, runs the handshake and lists the tools, all within the startup timeout.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	t, err := transportFor(s.cfg, s.m.o.Environ, s.m.o.Shim, &s.proc)
	if err != nil {
		return nil, err
	}
	_ = s.proc.takeRefused() // a refusal of an earlier connection is not this one's cause
	client := sdk.NewClient(&sdk.Implementation{Name: "zeroclaw", Version: s.m.o.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.m.refresh(s) },
	})
	// The connection's context lives as long as the connection (the SSE transport reads its stream under
	// it); the startup timeout cancels it only while the handshake and the first tools/list run.
	cctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(time.Duration(s.cfg.StartupTimeout())*time.Second, cancel)
	sess, err := client.Connect(cctx, t, nil)
	if err != nil {
		fired := !timer.Stop()
		cancel()
		if refused := s.proc.takeRefused(); refused != nil {
			err = refused
		}
		return nil, fmt.Errorf("initialize: %w", timeoutErr(ctx, fired, err, s.cfg.StartupTimeout()))
	}
	tools, err := listTools(cctx, sess)
	if fired := !timer.Stop(); fired || err != nil {
		_ = sess.Close()
		cancel()
		return nil, fmt.Errorf("tools/list: %w", timeoutErr(ctx, fired, err, s.cfg.StartupTimeout()))
	}
	s.mu.Lock()
	s.connCancel = cancel
	s.mu.Unlock()
	s.mu.Lock()
	s.sess, s.tools, s.state, s.connected, s.lastErr = sess, s.entries(tools), StateReady, time.Now(), ""
	s.mu.Unlock()
	s.m.changed()
	return sess, nil
}

func timeoutErr(ctx context.Context, fired bool, err error, secs int) error {
	if ctx.Err() == nil && fired {
		return fmt.Errorf("no answer within startup_timeout_secs (%ds)", secs)
	}
	return err
}

// listTools follows tools/list pages (upstream reads only the first), bounded in pages and tools.
func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	cursor := ""
	for range maxListPages {
		res, err := sess.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" || len(out) >= maxTools {
			break
		}
		cursor = res.NextCursor
	}
	if len(out) > maxTools {
		out = out[:maxTools]
	}
	return out, nil
}

// refreshTools re-lists the tools after notifications/tools/list_changed.
func (s *server) refreshTools(ctx context.Context) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(s.cfg.StartupTimeout())*time.Second)
	defer cancel()
	tools, err := listTools(cctx, sess)
	if err != nil {
		s.m.log.Warn("mcp tools/list after list_changed", "component", "mcp", "mcp_server", s.cfg.Name, "err", s.scrub(err.Error()))
		return
	}
	s.mu.Lock()
	if s.sess == sess {
		s.tools = s.entries(tools)
	}
	s.mu.Unlock()
	s.m.changed()
}

func (s *server) toolCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tools)
}

// snapshot returns the session and tools of a ready server (nil otherwise).
func (s *server) snapshot() (*sdk.ClientSession, []toolEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateReady {
		return nil, nil
	}
	return s.sess, s.tools
}

// toolEntry is one tool of a server under the name the model sees.
type toolEntry struct {
	name   string // <server>__<tool>, sanitised
	remote string // the server's own name for it
	desc   string
	schema json.RawMessage
}

// entries names the server's tools as upstream does (<server>__<tool>), made safe for providers' name rules
// (letters, digits, _ and -, at most 64 bytes); a name that collides after that gets a numbered suffix.
func (s *server) entries(ts []*sdk.Tool) []toolEntry {
	prefix := sanitizeName(s.cfg.Name) + "__"
	seen := map[string]bool{}
	out := make([]toolEntry, 0, len(ts))
	for _, t := range ts {
		if t == nil || t.Name == "" {
			continue
		}
		name := truncate(prefix+sanitizeName(t.Name), 64)
		for i := 2; seen[name]; i++ {
			suffix := fmt.Sprintf("_%d", i)
			name = truncate(prefix+sanitizeName(t.Name), 64-len(suffix)) + suffix
		}
		seen[name] = true
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			desc = "MCP tool"
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || len(schema) > maxSchemaSize || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, toolEntry{name: name, remote: t.Name, desc: truncate(desc, maxDescBytes), schema: schema})
	}
	return out
}

func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// scrub removes the server's configured secrets (env and header values) and anything shaped like a credential.
func (s *server) scrub(text string) string {
	s.scrubOnce.Do(func() { s.scrubFn = s.m.scrubberFor(s.cfg) })
	return s.scrubFn(text)
}
