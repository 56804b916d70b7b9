// Package session keeps the daemon's live chat sessions: it creates and restores them, serializes their turns
// on a per-session queue, routes approvals and cancellations, and reports every turn to the caller's Sink.
package session

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// Sentinel errors; the rpc layer maps each to its wire code (protocol.md §4).
var (
	// ErrNotFound (-32000): the session is unknown: neither live nor stored.
	ErrNotFound = errors.New("session: not found")
	// ErrNoActiveTurn (-32000): session/cancel found no running turn. Its text is the wire message.
	ErrNoActiveTurn = errors.New("No active turn for this session")
	// ErrBusy (-32002): the session cannot take the call now. Every busy error is one of the two below, which
	// both match it.
	ErrBusy = errors.New("session: busy")
	// ErrQueueFull: QueueDepth prompts already wait behind the running turn. Its text is ErrBusy's.
	ErrQueueFull error = &busyError{ErrBusy}
	// ErrQueueTimeout: the call waited the lock timeout for the running turn. Its text is ErrBusy's.
	ErrQueueTimeout error = &busyError{ErrBusy}
	// ErrNotOwned (-32003): a non-admin principal acted on a session it does not own.
	ErrNotOwned = errors.New("session: not owned by the caller")
	// ErrLimit (-32001): too many live sessions: none became idle within the lock timeout.
	ErrLimit = errors.New("session: too many live sessions")
	// ErrInvalid (-32602): invalid params; wrapped with the detail (blank prompt, unknown agent...).
	ErrInvalid = errors.New("session: invalid params")
	// ErrNoElicitation is what a Sink returns from Elicit when its client did not declare the capability.
	ErrNoElicitation = errors.New("session: client cannot answer elicitation requests")
	// ErrClosed: the manager has been shut down.
	ErrClosed = errors.New("session: manager shut down")
)

// busyError is one of ErrBusy's kinds: distinct sentinels (compared by pointer) with ErrBusy's text, so the
// wire message stays the same whichever it is.
type busyError struct{ busy error }

func (e *busyError) Error() string { return e.busy.Error() }
func (e *busyError) Unwrap() error { return e.busy }

// Defaults of Options and the actor queue (state.md §4).
const (
	DefaultMaxSessions = 64
	QueueDepth         = 8 // prompts that may wait behind the running one
	DefaultLockTimeout = 30 * time.Second
	DefaultIdleTTL     = 600 * time.Second
)

// Owner is the caller of a Manager method: who it is and which connection it speaks on.
type Owner struct {
	Principal string
	// Admin marks the owner or its equal (auth.Principal.Owner): it may act on every session, choose a cwd
	// outside the agent's workspace (under [acp] allowed_roots) and approve any call.
	Admin  bool
	ConnID uint64
	// Env is the environment the client's initialize asked to forward to tool processes.
	Env map[string]string
	// Grants are the principal's grants: a turn's memory tools and recall act with them.
	Grants []string
	// MaxApproveRisk caps the risk of the calls this principal may approve ("" : no cap).
	MaxApproveRisk string
	// Agents and Tools are the principal's allowed_agents and allowed_tools (auth.Principal): nil is every
	// agent (tool), otherwise only those listed.
	Agents, Tools []string
}

// OwnerOf is the session-layer identity of principal pr on connection connID; a nil pr owns nothing.
func OwnerOf(pr *auth.Principal, connID uint64) Owner {
	o := Owner{ConnID: connID}
	if pr != nil {
		o.Principal, o.Admin, o.Grants, o.MaxApproveRisk = pr.Name, pr.Owner(), pr.Grants, pr.MaxApproveRisk
		o.Agents, o.Tools = pr.Agents, pr.Tools
	}
	return o
}

// allows reports whether o holds grant (an admin holds every grant).
func (o Owner) allows(grant string) bool { return o.Admin || auth.Allows(o.Grants, grant) }

// Sink is the connection that sent a prompt.
type Sink interface {
	// Update delivers one event. It is called from the turn's goroutine, in order, and must not block for long.
	Update(ev api.SessionUpdate)
	// Elicit asks the client a question (elicitation/create). It returns an error wrapping ErrNoElicitation if
	// the client did not declare the capability, and must honour ctx.
	Elicit(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error)
}

// Options configures a Manager. Chat and Config are required.
type Options struct {
	Chat store.Chat // sessions.db, or the JSONL files (session_backend)
	// Cost records each provider request's usage and checks the budgets before each; nil records nothing.
	Cost *cost.Tracker
	// Logs receives the runtime events of sessions and turns (start, end, tool calls, approvals); nil discards.
	Logs        logs.Publisher
	Config      func() *config.Config
	InstallRoot string // agents/<alias>/workspace lives here
	// DataDir is the data directory when it lies outside InstallRoot (ZEROCLAW_DATA_DIR): tools may not touch
	// it either (tools.Protected). "" : <install>/data, protected with the install root.
	DataDir string
	Logger  *slog.Logger
	// MaxSessions caps the live sessions; 0 means the config's [acp] max_sessions, else DefaultMaxSessions.
	MaxSessions int
	// NewProvider builds the provider an agent names; nil means agent.NewProvider.
	NewProvider ProviderFactory
	// Clock stamps messages and states, measures idleness and times the lock and approval waits; nil means
	// clock.Real.
	Clock       clock.Clock
	NewID       func() string // session, turn, approval and cost-record ids; nil means random UUIDv4 strings
	LockTimeout time.Duration // how long a queued prompt waits for its turn; 0 means DefaultLockTimeout
	// IdleTTL is how long an idle live session stays in memory; 0 means the config's [acp]
	// session_timeout_secs, else DefaultIdleTTL. A dropped session comes back with its history at the next call
	// that names it.
	IdleTTL time.Duration
	// ACP is the durable ACP session store (acp-sessions.db); nil keeps ACP sessions in memory only.
	ACP *store.ACPStore
	// Memory gives chat turns their agent's memory (recall, auto-save, memory tools); nil: no memory.
	Memory *memory.Manager
	// Cron gives turns the cron_* tools, scoped to the turn's agent; nil: the tools are not offered.
	Cron func(agent string) tools.Cron
	// Delegate gives turns the delegate tool; nil, or a nil Delegator for an agent: not offered.
	Delegate func(agent string) tools.Delegator
	// MCP gives a turn the tools of the MCP servers its agent is granted in cfg (conv is the session id);
	// nil, or a nil result: none. It may wait, bounded by ctx, for servers on their first start.
	MCP func(ctx context.Context, cfg *config.Config, agent, conv string) MCPTools
	// EditorMCP starts the MCP servers an editor names in ACP session/new for that session; nil: editor
	// servers are accepted and ignored.
	EditorMCP func(servers []config.MCPServerConfig) EditorMCP
	// SOPs gives turns the sop_* tools, acting as the turn's agent; nil, or a nil result: not offered.
	SOPs func(agent string) tools.SOPs
}

// ProviderFactory builds the provider that an agent's model_provider reference names, from the config in force.
type ProviderFactory func(cfg *config.Config, ref string) (agent.Provider, error)

// Manager holds the live sessions. It is safe for concurrent use.
type Manager struct {
	o   Options
	log *slog.Logger
	wg  sync.WaitGroup // one per Prompt in flight

	identity workspace.Cache // the agents' identity files, for the system prompt

	mu       sync.Mutex // guards the fields below, and every turnLock's refs
	sessions map[string]*session
	// locks holds the turn lock of each stored session key in use: live, or with a turn (of a dropped
	// incarnation too) or a Delete holding or waiting for the lock. Each incarnation of a session (one closed or
	// evicted, then revived) uses the same lock while any of these remain, so a revived session's turns queue
	// behind a turn of the dropped one that is still winding down, and Delete waits for that turn before
	// deleting rows. Keyed by the stored key, not the id, so that two ids naming one row (abc and rpc_abc both
	// reach rpc_abc) never run turns on it at once. An entry goes when its last user does, so the map is bounded
	// by the live sessions and requests in flight.
	locks  map[string]*turnLock
	closed bool
	// slotFreed is closed (and replaced) whenever a live session may have become droppable or left the live
	// set, waking the calls that wait for room (register).
	slotFreed chan struct{}
	gens      uint64         // the last session incarnation number given out
	held      map[string]int // agent aliases no session may be opened on (HoldAgent), with their hold counts
	// channelUses counts the channel turns (RunChannel) in flight per session id, so only the last one out
	// closes the session it opened.
	channelUses map[string]*channelUse
	// approvals fires at every change of any live session's pending approvals (ApprovalsChanged).
	approvals Signal
}

// turnLock is the turn lock of one stored session key.
type turnLock struct {
	ch   chan struct{} // capacity 1: held by the running turn, or by Delete
	refs int           // users (see Manager.locks); guarded by Manager.mu
}

// NewManager returns a Manager with no live sessions.
func NewManager(o Options) *Manager {
	o.MaxSessions = max(o.MaxSessions, 0)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NewProvider == nil {
		o.NewProvider = agent.NewProvider
	}
	if o.Logs == nil {
		o.Logs = logs.Discard
	}
	o.Clock = clock.OrReal(o.Clock)
	if o.NewID == nil {
		o.NewID = uuid4
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	o.IdleTTL = max(o.IdleTTL, 0)
	return &Manager{o: o, log: o.Logger.With("component", "session"), sessions: make(map[string]*session),
		locks: make(map[string]*turnLock), slotFreed: make(chan struct{})}
}

func (m *Manager) now() time.Time { return m.o.Clock.Now() }

// maxSessions is the live-session cap in force: Options.MaxSessions, else [acp] max_sessions, else the default.
func (m *Manager) maxSessions() int {
	if m.o.MaxSessions > 0 {
		return m.o.MaxSessions
	}
	if cfg := m.o.Config(); cfg != nil && cfg.ACP.MaxSessions > 0 {
		return cfg.ACP.MaxSessions
	}
	return DefaultMaxSessions
}

// idleTTL is how long an idle session stays live: Options.IdleTTL, else [acp] session_timeout_secs, else the
// default.
func (m *Manager) idleTTL() time.Duration {
	if m.o.IdleTTL > 0 {
		return m.o.IdleTTL
	}
	if cfg := m.o.Config(); cfg != nil && cfg.ACP.SessionTimeoutSecs > 0 {
		return time.Duration(cfg.ACP.SessionTimeoutSecs) * time.Second
	}
	return DefaultIdleTTL
}

// signalSlotLocked wakes the calls waiting for room in the live set. The caller holds m.mu.
func (m *Manager) signalSlotLocked() {
	close(m.slotFreed)
	m.slotFreed = make(chan struct{})
}

func (m *Manager) signalSlot() {
	m.mu.Lock()
	m.signalSlotLocked()
	m.mu.Unlock()
}

// New opens a session (protocol.md §6 session/new). Naming an existing session_id restores it: a live one is
// returned as is, a stored one (found by store.Resolve: <id>, rpc_<id>, gw_<id>) is made live again with its
// history and keeps its key. A new session is stored as rpc_<id>. The agent defaults to the only enabled one;
// the workspace is created (0700) if missing.
func (m *Manager) New(ctx context.Context, o Owner, p api.SessionNewParams) (api.SessionNewResult, error) {
	if isACP, err := chatMode(p.ChatMode); err != nil {
		return api.SessionNewResult{}, err
	} else if isACP {
		return m.newACPNative(ctx, o, p)
	}
	if p.SessionID != "" {
		if err := validID(p.SessionID); err != nil {
			return api.SessionNewResult{}, err
		}
		if s, err := m.live(p.SessionID); err == nil {
			if err := s.check(o); err != nil {
				return api.SessionNewResult{}, err
			}
			if s.acp != nil {
				return api.SessionNewResult{}, fmt.Errorf("%w: session %s is an ACP session (pass chat_mode \"acp\")", ErrInvalid, s.id)
			}
			if p.AgentAlias != "" && p.AgentAlias != s.alias {
				return api.SessionNewResult{}, fmt.Errorf("%w: session %s belongs to agent %q, not %q", ErrInvalid, s.id, s.alias, p.AgentAlias)
			}
			return m.newResult(ctx, s)
		}
	}
	var stored *store.SessionMeta
	if p.SessionID != "" {
		meta, err := m.o.Chat.Resolve(ctx, p.SessionID)
		switch {
		case err == nil:
			if !mayRevive(o, meta) {
				return api.SessionNewResult{}, fmt.Errorf("%w: %s", ErrNotOwned, p.SessionID)
			}
			stored = &meta
		case !errors.Is(err, store.ErrNotFound):
			return api.SessionNewResult{}, fmt.Errorf("session: new: %w", err)
		}
	}
	_, res, err := m.openChat(ctx, o, p, stored, false)
	return res, err
}

// openChat makes chat session p.SessionID live (a new one when stored is nil, else the stored row) and
// returns it pinned when pin is set (the caller then unpins it), with session/new's result.
func (m *Manager) openChat(ctx context.Context, o Owner, p api.SessionNewParams, stored *store.SessionMeta, pin bool) (*session, api.SessionNewResult, error) {
	cfg := m.o.Config()
	alias := p.AgentAlias
	if alias == "" && stored != nil {
		alias = stored.AgentAlias
	}
	if alias == "" {
		var err error
		if alias, err = agent.DefaultAgent(cfg); err != nil {
			return nil, api.SessionNewResult{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if stored != nil && stored.AgentAlias != "" && stored.AgentAlias != alias {
		return nil, api.SessionNewResult{}, fmt.Errorf("%w: session %s belongs to agent %q, not %q", ErrInvalid, p.SessionID, stored.AgentAlias, alias)
	}
	if err := o.mayUse(alias); err != nil {
		return nil, api.SessionNewResult{}, err
	}
	prof, err := agent.Resolve(cfg, alias, m.o.InstallRoot)
	if err != nil {
		return nil, api.SessionNewResult{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := os.MkdirAll(prof.Workspace, 0o700); err != nil {
		return nil, api.SessionNewResult{}, fmt.Errorf("session: new: workspace: %w", err)
	}
	m.seedWorkspace(cfg, alias, prof.Workspace)
	id := p.SessionID
	if id == "" {
		id = m.o.NewID()
	}
	key := store.RPCKey(id)
	// The owner recorded with the session keeps it when an admin revives it; an unowned one is claimed.
	owner := o.Principal
	if stored != nil {
		key = stored.Key
		if stored.Owner != "" {
			owner = stored.Owner
		}
	}
	s, err := m.register(ctx, o, newSession(id, key, alias, prof.Workspace, owner, m.now()), true)
	if err != nil {
		return nil, api.SessionNewResult{}, err
	}
	if s.acp != nil { // an ACP session of that id was made live meanwhile
		m.unpin(s)
		return nil, api.SessionNewResult{}, fmt.Errorf("%w: session %s is an ACP session (pass chat_mode \"acp\")", ErrInvalid, s.id)
	}
	ok := false
	defer func() {
		if !ok || !pin {
			m.unpin(s)
		}
	}()

	meta, existed, err := m.o.Chat.EnsureSession(ctx, s.key, alias, s.owner, m.now())
	if err != nil {
		m.drop(s)
		return nil, api.SessionNewResult{}, fmt.Errorf("session: new: %w", err)
	}
	if !mayRevive(o, meta) { // another principal's New of this id stored its row first
		m.drop(s)
		return nil, api.SessionNewResult{}, fmt.Errorf("%w: %s", ErrNotOwned, id)
	}
	if meta.State == stateRunning && !s.running() {
		// A turn was running when the daemon stopped; nothing runs it now.
		if err := m.o.Chat.SetState(ctx, s.key, stateIdle, "", nil); err != nil {
			m.log.Warn("reset stale running state", "session", id, "err", err)
		}
	}
	m.log.Debug("session open", "session", id, "agent", alias, "restored", stored != nil)
	if !existed {
		m.logSession(s, "create", "session created")
	}
	ok = true
	return s, api.SessionNewResult{SessionID: id, AgentAlias: alias, MessageCount: meta.MessageCount, WorkspaceDir: prof.Workspace}, nil
}

func (m *Manager) newResult(ctx context.Context, s *session) (api.SessionNewResult, error) {
	meta, err := m.o.Chat.Meta(ctx, s.key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return api.SessionNewResult{}, fmt.Errorf("session: new: %w", err)
	}
	return api.SessionNewResult{SessionID: s.id, AgentAlias: s.alias, MessageCount: meta.MessageCount, WorkspaceDir: s.workspace}, nil
}

// live returns the live session id, or ErrNotFound.
func (m *Manager) live(id string) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	s := m.sessions[id]
	if s == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return s, nil
}

// owned returns the live session id after checking o may act on it.
func (m *Manager) owned(o Owner, id string) (*session, error) {
	s, err := m.live(id)
	if err != nil {
		return nil, err
	}
	if err := s.check(o); err != nil {
		return nil, err
	}
	return s, nil
}

// use returns session id for o to act on, pinned live until done is called: the live session, or, when it
// is not live (dropped from memory when idle, closed, or not opened since the daemon started), the stored one
// made live again as session/new would (an ACP session of a surface the native socket serves, or a chat
// session). So a call never sees that a session was dropped. ErrNotFound: neither live nor stored.
func (m *Manager) use(ctx context.Context, o Owner, id string) (s *session, done func(), err error) {
	for range 3 { // a session revived by reviveACP may be dropped again before it is pinned: look again
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, nil, ErrClosed
		}
		s = m.sessions[id]
		if s != nil {
			s.pin()
		}
		m.mu.Unlock()
		if s == nil {
			if s, err = m.revive(ctx, o, id); err != nil {
				return nil, nil, err
			}
			if s == nil {
				continue
			}
		}
		if err := s.check(o); err != nil {
			m.unpin(s)
			return nil, nil, err
		}
		return s, func() { m.unpin(s) }, nil
	}
	return nil, nil, fmt.Errorf("%w (session %s keeps being dropped; retry)", ErrLimit, id)
}

// revive makes stored session id live for o and returns it pinned, or nil (not an error) when an ACP session
// it revived was dropped again before it could be pinned.
func (m *Manager) revive(ctx context.Context, o Owner, id string) (*session, error) {
	if validID(id) != nil || id == "" {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	s, err := m.recoverForPrompt(ctx, o, id)
	if err == nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.sessions[id] != s {
			return nil, nil
		}
		s.pin()
		return s, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	meta, err := m.o.Chat.Resolve(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if !mayRevive(o, meta) {
		return nil, fmt.Errorf("%w: %s", ErrNotOwned, id)
	}
	s, _, err = m.openChat(ctx, o, api.SessionNewParams{SessionID: id}, &meta, true)
	if err != nil {
		return nil, err
	}
	m.log.Debug("session revived from the store", "session", id)
	return s, nil
}

// pin counts one more use of s (Manager.use): a pinned session is not idle, so it is not dropped.
func (s *session) pin() {
	s.mu.Lock()
	s.pins++
	s.mu.Unlock()
}

// unpin ends one use of s; it may be droppable now, so the calls waiting for room look again.
func (m *Manager) unpin(s *session) {
	s.unpin(m.now())
	m.signalSlot()
}

// register adds s to the live set, making room by dropping idle sessions when needed; when none is idle it
// waits for one to become so, failing with ErrLimit after the lock timeout passes with no session becoming
// idle or leaving. If a concurrent call for the same id won, that
// session is returned instead (after the ownership check). With pin, the session returned is pinned.
func (m *Manager) register(ctx context.Context, o Owner, s *session, pin bool) (*session, error) {
	var timer *clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		if other := m.sessions[s.id]; other != nil {
			m.mu.Unlock()
			if err := other.check(o); err != nil {
				return other, err
			}
			if pin {
				other.pin()
			}
			return other, nil
		}
		if m.held[s.alias] > 0 {
			m.mu.Unlock()
			return nil, fmt.Errorf("%w: agent %q is being renamed; retry", ErrInvalid, s.alias)
		}
		limit := m.maxSessions()
		evicted := m.evictIdleLocked(limit)
		full := len(m.sessions) >= limit
		if !full {
			s.lock = m.refLockLocked(s.key) // s is not shared yet; the live session is one user of the lock
			m.gens++
			s.gen = m.gens
			s.approvals = &m.approvals
			if pin {
				s.pins++
			}
			m.sessions[s.id] = s
		}
		freed := m.slotFreed
		m.mu.Unlock()
		for _, id := range evicted {
			m.log.Debug("idle session dropped from memory", "session", id)
		}
		if !full {
			return s, nil
		}
		if timer == nil {
			m.log.Debug("live sessions at the limit, none idle: waiting for room", "session", s.id, "limit", limit)
			timer = m.o.Clock.NewTimer(m.o.LockTimeout)
		}
		select {
		case <-freed:
			// A session became idle or left (and another waiter may have taken the room): the limit is the
			// lock timeout without any such change, not in all, so a long line behind busy sessions drains.
			timer.Stop()
			timer = m.o.Clock.NewTimer(m.o.LockTimeout)
		case <-ctx.Done():
			return nil, fmt.Errorf("session: %s: waiting for room among the live sessions: %w", s.id, context.Cause(ctx))
		case <-timer.C:
			return nil, fmt.Errorf("%w (%d sessions, none idle within %s)", ErrLimit, limit, m.o.LockTimeout)
		}
	}
}

// evictIdleLocked drops from the live set the sessions idle for longer than the idle TTL and, if the set is
// still at limit, the least recently used idle one that holds no memory-only state (idleSince). Their history
// and owner stay in the store, so the next call naming the id brings them back (Manager.use). Each is closed at
// the moment it is found idle (retireIfIdle), and a caller that looked it up holds a pin, so no call is left
// with a dropped session. The caller holds m.mu; it logs the returned ids after unlocking.
func (m *Manager) evictIdleLocked(limit int) (evicted []string) {
	type candidate struct {
		s  *session
		at time.Time
	}
	var candidates []candidate // idle, within the TTL: room can be made with them, oldest first
	now, ttl := m.now(), m.idleTTL()
	for id, s := range m.sessions {
		at, idle, sticky := s.idleSince()
		if !idle {
			continue
		}
		if now.Sub(at) > ttl {
			if s.retireIfIdle() {
				m.removeLocked(s)
				evicted = append(evicted, id)
			}
			continue
		}
		if !sticky {
			candidates = append(candidates, candidate{s, at})
		}
	}
	slices.SortFunc(candidates, func(a, b candidate) int { return a.at.Compare(b.at) })
	for _, c := range candidates {
		if len(m.sessions) < limit {
			break
		}
		if s := c.s; s.retireIfIdle() {
			m.removeLocked(s)
			evicted = append(evicted, s.id)
		}
	}
	return evicted
}

// mayRevive reports whether o may reach a stored session: an admin always; anyone else only a session stored
// as theirs (a session with no recorded owner is the admins' until one of them revives it).
func mayRevive(o Owner, meta store.SessionMeta) bool {
	return o.Admin || (meta.Owner != "" && meta.Owner == o.Principal)
}

// drop removes s from the live set (if it is still the one registered) and ends its work.
func (m *Manager) drop(s *session) {
	m.mu.Lock()
	m.removeLocked(s)
	m.mu.Unlock()
	s.close()
}

// removeLocked takes s out of the live set if it is the session registered under its id, releasing the live
// session's use of the turn lock. The caller holds m.mu.
func (m *Manager) removeLocked(s *session) {
	if m.sessions[s.id] != s {
		return
	}
	delete(m.sessions, s.id)
	m.unrefLockLocked(s.key, s.lock)
	m.signalSlotLocked()
}

// refLockLocked returns the turn lock of the session stored under key, made if no one uses it, counting one
// more user. The caller holds m.mu.
func (m *Manager) refLockLocked(key string) *turnLock {
	l := m.locks[key]
	if l == nil {
		l = &turnLock{ch: make(chan struct{}, 1)}
		m.locks[key] = l
	}
	l.refs++
	return l
}

// unrefLockLocked counts one user of l fewer, forgetting l when it was the last: then nothing holds or waits
// for it, so a later user may as well start a new one. The caller holds m.mu.
func (m *Manager) unrefLockLocked(key string, l *turnLock) {
	l.refs--
	if l.refs == 0 && m.locks[key] == l {
		delete(m.locks, key)
	}
}

func (m *Manager) unrefLock(key string, l *turnLock) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unrefLockLocked(key, l)
}

// Cancel cancels the session's running turn; queued prompts stay queued.
func (m *Manager) Cancel(o Owner, id string) (api.SessionCancelResult, error) {
	s, err := m.owned(o, id)
	if errors.Is(err, ErrNotFound) { // not live: stored (o may reach it) means idle, so no turn to cancel
		if err = m.storedAccess(context.Background(), o, id); err == nil {
			return api.SessionCancelResult{}, fmt.Errorf("%w", ErrNoActiveTurn)
		}
	}
	if err != nil {
		return api.SessionCancelResult{}, err
	}
	if !s.cancelActive() {
		return api.SessionCancelResult{}, fmt.Errorf("%w", ErrNoActiveTurn)
	}
	return api.SessionCancelResult{SessionID: id, Cancelled: true}, nil
}

// Close makes the session not live: its running and queued turns are cancelled and its pending approvals
// denied. The stored history stays; session/new with the id restores it.
func (m *Manager) Close(o Owner, id string) (api.SessionCloseResult, error) {
	s, err := m.owned(o, id)
	if errors.Is(err, ErrNotFound) { // not live, as a close leaves it: closing it again is done already
		if err = m.storedAccess(context.Background(), o, id); err == nil { // a local read, not bounded by a caller
			return api.SessionCloseResult{SessionID: id, Closed: true}, nil
		}
	}
	if err != nil {
		return api.SessionCloseResult{}, err
	}
	m.drop(s)
	s.waitStores() // a file being stored for it lands before the close answers
	m.logSession(s, "close", "session closed")
	return api.SessionCloseResult{SessionID: id, Closed: true}, nil
}

// logSession publishes a session's lifecycle event (category session; the dashboard's live stream names
// create session_created, close and delete session_closed).
func (m *Manager) logSession(s *session, action, msg string) {
	m.o.Logs.Publish(logs.Entry{Category: logs.CategorySession, Action: action, Outcome: logs.OutcomeSuccess,
		Message: msg, Zeroclaw: s.attribution()})
}

// Delete closes the session if it is live and deletes its stored history: the one row its id resolves to (a
// row shadowed by it, such as rpc_<id> beside a bare <id>, stays). Deleting an unknown session succeeds.
func (m *Manager) Delete(ctx context.Context, o Owner, id string) (api.SessionDeleteResult, error) {
	if res, handled, err := m.deleteACP(ctx, o, id); handled {
		return res, err
	}
	key, err := m.access(ctx, o, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return api.SessionDeleteResult{}, err
	}
	if s, err := m.live(id); err == nil {
		m.drop(s)
		s.waitStores()
	}
	if key != "" {
		// The turn drop cancelled still writes its last messages and state; delete after it ends, or those
		// writes would recreate the session.
		release, err := m.lockTurns(ctx, key)
		if err != nil {
			return api.SessionDeleteResult{}, err
		}
		err = m.o.Chat.Delete(ctx, key)
		release()
		if err != nil {
			return api.SessionDeleteResult{}, fmt.Errorf("session: delete: %w", err)
		}
		m.o.Logs.Publish(logs.Entry{Category: logs.CategorySession, Action: "delete", Outcome: logs.OutcomeSuccess,
			Message: "session deleted", Zeroclaw: map[string]any{"session_key": key}})
	}
	return api.SessionDeleteResult{SessionID: id, Deleted: true}, nil
}

// lockTurns takes the turn lock of the session stored under key, waiting at most LockTimeout for a running
// turn to end. The returned func releases it. Held, it also makes a session revived meanwhile queue its turns
// behind the delete.
func (m *Manager) lockTurns(ctx context.Context, key string) (func(), error) {
	m.mu.Lock()
	l := m.refLockLocked(key)
	m.mu.Unlock()
	release := func() {
		<-l.ch
		m.unrefLock(key, l)
	}
	select {
	case l.ch <- struct{}{}:
		return release, nil
	default:
	}
	m.log.Debug("delete: waiting for the running turn", "session", key)
	timer := m.o.Clock.NewTimer(m.o.LockTimeout)
	defer timer.Stop()
	select {
	case l.ch <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		m.unrefLock(key, l)
		return nil, fmt.Errorf("session: delete %s: waiting for the turn: %w", key, context.Cause(ctx))
	case <-timer.C:
		m.unrefLock(key, l)
		return nil, fmt.Errorf("%w: %s: waited %s for the running turn", ErrQueueTimeout, key, m.o.LockTimeout)
	}
}

// storedAccess checks that o may reach session id that is not live, stored as an ACP or a chat session;
// ErrNotFound when neither store has it.
func (m *Manager) storedAccess(ctx context.Context, o Owner, id string) error {
	s, isACP, err := m.acpTarget(ctx, id)
	if err != nil {
		return err
	}
	if isACP {
		return acpAccess(o, s, id)
	}
	_, err = m.access(ctx, o, id)
	return err
}

// access checks that o may read or delete session id, live or stored (by the owner stored with it), and
// returns its key in sessions.db: the live session's, or the row store.Resolve finds.
func (m *Manager) access(ctx context.Context, o Owner, id string) (key string, err error) {
	if s, err := m.live(id); err == nil {
		return s.key, s.check(o)
	} else if errors.Is(err, ErrClosed) {
		return "", err
	}
	meta, err := m.o.Chat.Resolve(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return "", fmt.Errorf("session: %w", err)
	}
	if !mayRevive(o, meta) {
		return "", fmt.Errorf("%w: %s", ErrNotOwned, id)
	}
	return meta.Key, nil
}

// List returns stored sessions, most recent first (FTS search when Query is set), leaving out rows with
// neither an agent nor a channel (upstream). Each is listed under the id clients use for it (its key without
// an rpc_ or gw_ prefix), with the key beside it. A non-admin principal sees only the sessions it owns.
//
// A page holds at most limit rows (api.DefaultSessionListLimit when none is given, never more than
// api.MaxSessionListLimit) from offset on, offsets counting the sessions o may see; has_more and next_offset
// name the next page.
func (m *Manager) List(ctx context.Context, o Owner, p api.SessionListParams) (api.SessionListResult, error) {
	p.Offset = max(p.Offset, 0) // the rpc layer refuses a negative one (-32602)
	limit := p.Limit
	if limit <= 0 {
		limit = api.DefaultSessionListLimit
	}
	limit = min(limit, api.MaxSessionListLimit)
	// The rows o may see, from the most recent, until one past the page is known or the store has no more. An
	// admin sees every row, so one read of offset+limit+1 rows does; a non-admin's window grows until enough of
	// its own are in it.
	want := p.Offset + limit + 1
	var visible []store.SessionMeta
	for fetch := want; ; fetch *= 4 {
		rows, err := m.o.Chat.ListAttributed(ctx, p.Query, fetch)
		if err != nil {
			return api.SessionListResult{}, fmt.Errorf("session: list: %w", err)
		}
		visible = visible[:0]
		for _, r := range rows {
			if o.Admin || (r.Owner != "" && r.Owner == o.Principal) {
				visible = append(visible, r)
			}
		}
		if len(visible) >= want || len(rows) < fetch {
			break
		}
	}
	out := api.SessionListResult{Sessions: []api.SessionSummary{}}
	if len(visible) > p.Offset+limit {
		out.HasMore, out.NextOffset = true, p.Offset+limit
		visible = visible[:p.Offset+limit]
	}
	for _, r := range visible[min(p.Offset, len(visible)):] {
		out.Sessions = append(out.Sessions, api.SessionSummary{
			SessionID:    store.SessionID(r.Key),
			SessionKey:   r.Key,
			CreatedAt:    r.CreatedAt.UTC().Format(time.RFC3339),
			LastActivity: r.LastActivity.UTC().Format(time.RFC3339),
			MessageCount: r.MessageCount,
			AgentAlias:   r.AgentAlias,
			ChannelID:    r.ChannelID,
			Name:         r.Name,
			State:        r.State,

			LastTurnInterrupted: r.Interrupted,
			InterruptedTurnID:   r.InterruptedTurnID,
		})
	}
	return out, nil
}

// State reports the session's turn state as stored (running/idle/error, turn id and start).
func (m *Manager) State(ctx context.Context, o Owner, id string) (api.SessionStateResult, error) {
	if s, isACP, err := m.acpTarget(ctx, id); err != nil {
		return api.SessionStateResult{}, err
	} else if isACP {
		if err := acpAccess(o, s, id); err != nil {
			return api.SessionStateResult{}, err
		}
		return m.acpStateOf(ctx, s, id)
	}
	key, err := m.access(ctx, o, id)
	if err != nil {
		return api.SessionStateResult{}, err
	}
	meta, err := m.o.Chat.Meta(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return api.SessionStateResult{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return api.SessionStateResult{}, fmt.Errorf("session: state: %w", err)
	}
	out := api.SessionStateResult{SessionID: id, State: meta.State, TurnID: meta.TurnID,
		LastTurnInterrupted: meta.Interrupted, InterruptedTurnID: meta.InterruptedTurnID}
	if meta.TurnStartedAt != nil {
		out.TurnStartedAt = meta.TurnStartedAt.UTC().Format(time.RFC3339Nano)
	}
	return out, nil
}

// Approve answers a pending approval_request of the session. Acknowledged is false when nothing was pending
// under that id (unknown, already answered or expired request; unknown session).
func (m *Manager) Approve(o Owner, p api.SessionApproveParams) (api.SessionApproveResult, error) {
	switch p.Decision {
	case api.DecisionAllowOnce, api.DecisionAllowAlways, api.DecisionReject, api.DecisionRejectOnce:
	case api.DecisionRejectWithEdit:
		if !isObject(p.Replacement) {
			return api.SessionApproveResult{}, fmt.Errorf("%w: reject_with_edit needs replacement arguments (a JSON object)", ErrInvalid)
		}
	default:
		return api.SessionApproveResult{}, fmt.Errorf("%w: unknown decision: %s", ErrInvalid, p.Decision)
	}
	res := api.SessionApproveResult{SessionID: p.SessionID, RequestID: p.RequestID}
	s, err := m.owned(o, p.SessionID)
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrClosed) {
		return res, nil // nothing is pending there: not acknowledged, not an error (protocol.md §6)
	}
	if err != nil {
		return api.SessionApproveResult{}, err
	}
	// An unknown, already answered or expired request is not acknowledged.
	res.Acknowledged, err = s.decide(o, p.RequestID, agent.ApprovalDecision{Decision: p.Decision, Replacement: p.Replacement})
	if err != nil {
		return api.SessionApproveResult{}, err
	}
	if res.Acknowledged {
		action := "approve"
		if p.Decision != api.DecisionAllowOnce && p.Decision != api.DecisionAllowAlways {
			action = "reject"
		}
		m.o.Logs.Publish(logs.Entry{Category: logs.CategoryTool, Action: action, Message: "approval answered: " + p.Decision,
			Zeroclaw: map[string]any{"agent_alias": s.alias, "session_key": s.key}, Attributes: map[string]any{"request_id": p.RequestID}})
	}
	return res, nil
}

// Disconnected cancels the turns (running or queued) that connection connID started and denies its pending
// approvals. Sessions survive.
func (m *Manager) Disconnected(connID uint64) {
	for _, s := range m.snapshot() {
		s.disconnected(connID)
	}
}

// ActiveIDs returns the ids of the live sessions, sorted.
func (m *Manager) ActiveIDs() []string {
	m.mu.Lock()
	if len(m.sessions) == 0 {
		m.mu.Unlock()
		return nil
	}
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	slices.Sort(ids)
	return ids
}

// ActiveIDsOf is ActiveIDs limited to the live sessions o may act on (all of them for an admin): a restricted
// device or user learns neither the ids nor the number of the owner's sessions from status.
func (m *Manager) ActiveIDsOf(o Owner) []string {
	if o.Admin {
		return m.ActiveIDs()
	}
	m.mu.Lock()
	var ids []string
	for id, s := range m.sessions {
		if s.check(o) == nil {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	slices.Sort(ids)
	return ids
}

// Shutdown refuses new work, cancels every turn, denies every pending approval, and waits for the turns to
// return (or for ctx to end). Sessions are not deleted: their history is durable.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	for _, s := range m.snapshot() {
		s.close()
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		m.log.Warn("shutdown: turns still running", "err", ctx.Err())
	}
}

func (m *Manager) snapshot() []*session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Values(m.sessions))
}

// uuid4 returns a random RFC 4122 version 4 UUID string.
func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// validID accepts ids a client may choose: 1..128 bytes of printable ASCII without spaces.
func validID(id string) error {
	if len(id) > 128 {
		return fmt.Errorf("%w: session_id longer than 128 bytes", ErrInvalid)
	}
	for _, r := range id {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("%w: session_id must be printable ASCII without spaces", ErrInvalid)
		}
	}
	return nil
}
