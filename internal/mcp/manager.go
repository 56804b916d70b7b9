// Package mcp is the daemon's MCP client: it starts and supervises the configured MCP servers (stdio children
// in their own process group, streamable HTTP, SSE), restarts them with backoff, follows their tool lists,
// and hands each turn the tools of the servers its agent is granted as a tools.External.
package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
)

// Options configure a Manager. Zero values get the defaults.
type Options struct {
	Logger *slog.Logger
	// Environ is the environment stdio children inherit (the daemon's, as upstream), the server's env on top.
	Environ []string
	// Shim is the binary stdio servers are started under (the daemon's own, os.Executable(); its main calls
	// RunShimIfAsked): on Linux the keeper takes the server's every descendant with it, even when the daemon is
	// killed with -9. Empty: servers are started directly (their group killed, Pdeathsig on the server only).
	Shim string
	// Version is sent as clientInfo.version.
	Version string
	// BackoffMin and BackoffMax bound the delay before a crashed or failed server is started again.
	BackoffMin, BackoffMax time.Duration
}

// Manager owns the MCP servers of one configuration (the daemon's, or one ACP session's editor servers).
// It is safe for concurrent use. mu guards the fields below it; a server's own state has its own lock,
// taken after mu when both are needed.
type Manager struct {
	o   Options
	log *slog.Logger
	// base is detached from every caller and cancelled by Close, so a background re-list in flight ends with
	// it; servers themselves are stopped by Close or Reconcile (their contexts do not inherit base's cancel).
	base       context.Context
	cancelBase context.CancelFunc
	wg         sync.WaitGroup // every server supervisor and list refresher

	mu       sync.Mutex
	servers  map[string]*server // by lower-case name
	order    []string
	enabled  bool
	deferred bool
	// schemaBudget is max_tool_schema_bytes with its default.
	schemaBudget int
	closed       bool
	version      chan struct{} // closed and replaced at every state change (tests and waiters)
	active       *activations
	pending      *config.MCPConfig // the latest config ReconcileAsync was given, not applied yet
	applying     bool              // a ReconcileAsync worker runs
}

// ReconcileAsync applies mcp in the background (a config listener must not wait for children to exit);
// calls that arrive while one is applied coalesce into the latest.
func (m *Manager) ReconcileAsync(mcp config.MCPConfig) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.pending = &mcp
	if m.applying {
		return
	}
	m.applying = true
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			m.mu.Lock()
			next := m.pending
			m.pending = nil
			if next == nil || m.closed {
				m.applying = false
				m.mu.Unlock()
				return
			}
			m.mu.Unlock()
			m.Reconcile(*next)
		}
	}()
}

// New returns a Manager with no servers; Reconcile gives it its configuration.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 500 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	base, cancel := context.WithCancel(context.Background())
	return &Manager{o: o, log: o.Logger, base: base, cancelBase: cancel, servers: map[string]*server{},
		version: make(chan struct{}), active: newActivations(1024)}
}

// Reconcile applies mcp (and the servers' config) : servers whose entry is unchanged keep running, changed or
// removed ones are stopped (their children reaped) and new ones created; eager servers start now. With
// mcp.enabled = false every server is stopped. It returns when the stopped servers are gone.
func (m *Manager) Reconcile(mcp config.MCPConfig) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.enabled, m.deferred, m.schemaBudget = mcp.Enabled, mcp.DeferredLoading, mcp.ToolSchemaBudget()
	want := map[string]config.MCPServerConfig{}
	var order []string
	if mcp.Enabled {
		for _, s := range mcp.Servers {
			k := strings.ToLower(strings.TrimSpace(s.Name))
			if _, dup := want[k]; k == "" || dup || strings.Contains(k, "__") {
				continue // validation reports these
			}
			want[k] = s
			order = append(order, k)
		}
	}
	var stop []*server
	for k, s := range m.servers {
		if c, ok := want[k]; !ok || fingerprint(c) != s.key {
			stop = append(stop, s)
			delete(m.servers, k)
		}
	}
	for _, k := range order {
		if _, ok := m.servers[k]; ok {
			continue
		}
		c := want[k]
		s := newServer(m, c, fingerprint(c))
		m.servers[k] = s
		if c.Start == config.MCPStartEager {
			s.start()
		}
	}
	m.order = order
	m.mu.Unlock()
	stopAll(stop)
	m.changed()
}

func stopAll(ss []*server) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(s.stop)
	}
	wg.Wait()
}

func fingerprint(c config.MCPServerConfig) string {
	b, _ := json.Marshal(c)
	return string(b)
}

// Close stops every server and waits for their children to be reaped. The Manager is unusable afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	ss := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		ss = append(ss, s)
	}
	m.servers = map[string]*server{}
	m.mu.Unlock()
	m.cancelBase() // a re-list in flight ends now, not when its server answers
	stopAll(ss)
	m.wg.Wait()
}

// changed wakes everyone waiting for a state change.
func (m *Manager) changed() {
	m.mu.Lock()
	close(m.version)
	m.version = make(chan struct{})
	m.mu.Unlock()
}

// Changed returns a channel closed at the next state change of any server.
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// refresh re-lists s's tools in the background (a list_changed notification arrives on the SDK's reader,
// which must not block on a request of its own).
func (m *Manager) refresh(s *server) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	s.mu.Lock() // at most one re-list per server at a time, and one queued: a storm of notifications coalesces
	if s.refreshing {
		s.refreshAgain = true
		s.mu.Unlock()
		m.mu.Unlock()
		return
	}
	s.refreshing = true
	s.mu.Unlock()
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		for {
			s.refreshTools(m.base)
			s.mu.Lock()
			if !s.refreshAgain {
				s.refreshing = false
				s.mu.Unlock()
				return
			}
			s.refreshAgain = false
			s.mu.Unlock()
		}
	}()
}

// scrubberFor removes a server's secrets (its env and header values, its URL's password and query values,
// which signed or token URLs carry) and credential shapes from text.
func (m *Manager) scrubberFor(c config.MCPServerConfig) func(string) string {
	var secrets []string
	for _, v := range c.Env {
		secrets = append(secrets, v)
	}
	if u, err := url.Parse(c.URL); err == nil && c.URL != "" {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
		for part := range strings.SplitSeq(u.RawQuery, "&") { // as written (escaped), which errors quote
			if _, v, ok := strings.Cut(part, "="); ok {
				secrets = append(secrets, v)
			}
		}
	}
	for _, v := range c.Headers {
		secrets = append(secrets, v)
		if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer <token>"
			secrets = append(secrets, tok)
		}
	}
	return provider.Scrubber(secrets)
}

// granted returns the servers of names (case-insensitive), in that order, starting lazy ones.
func (m *Manager) granted(names []string) []*server {
	defer m.changed()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || !m.enabled {
		return nil
	}
	var out []*server
	for _, n := range names {
		if s, ok := m.servers[strings.ToLower(strings.TrimSpace(n))]; ok {
			s.start()
			out = append(out, s)
		}
	}
	return out
}

// ServerStatus is one server's state as `tools`, `agents/status` and doctor show it.
type ServerStatus = api.MCPServerStatus

// Status returns every configured server's status, in config order. Nothing is started.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	ss := make([]*server, 0, len(m.order))
	for _, k := range m.order {
		if s, ok := m.servers[k]; ok {
			ss = append(ss, s)
		}
	}
	m.mu.Unlock()
	out := make([]ServerStatus, 0, len(ss))
	for _, s := range ss {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, Transport: s.cfg.TransportOrDefault(), State: s.state, Tools: len(s.tools),
			Restarts: s.restarts, LastError: s.lastErr, PID: s.proc.PID()}
		for _, t := range s.tools {
			st.ToolNames = append(st.ToolNames, t.name)
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// activations remembers, per conversation, the deferred tools tool_search activated (bounded: the oldest
// conversation is forgotten first).
type activations struct {
	mu    sync.Mutex
	max   int
	names map[string]map[string]bool
	order []string
}

func newActivations(max int) *activations {
	return &activations{max: max, names: map[string]map[string]bool{}}
}

func (a *activations) add(conv string, names []string) {
	if conv == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	set, ok := a.names[conv]
	if !ok {
		if len(a.order) >= a.max {
			delete(a.names, a.order[0])
			a.order = a.order[1:]
		}
		set = map[string]bool{}
		a.names[conv] = set
		a.order = append(a.order, conv)
	}
	for _, n := range names {
		if len(set) < maxTools*4 {
			set[n] = true
		}
	}
}

func (a *activations) get(conv string) map[string]bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]bool{}
	for n := range a.names[conv] {
		out[n] = true
	}
	return out
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
