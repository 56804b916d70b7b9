package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// HygieneInterval is how often the retention pass runs at most.
const HygieneInterval = 12 * time.Hour

// Options wires a Manager.
type Options struct {
	DataDir string // <install>/data: brain.db lives in memory/ below it
	Config  func() *config.Config
	Now     func() time.Time
	Logger  *slog.Logger
	// Workspace returns an agent's workspace directory (the markdown backend's files).
	Workspace func(cfg *config.Config, alias string) string
	// OnPrune, when set, is told of every prune of auto-saved conversation memories after it is done (the
	// daemon records it in the prune log and publishes a log event). It must not block for long.
	OnPrune func(store.Prune)
}

// ReopenRetry is how long a backend that failed to open is left alone before a use tries again (a PostgreSQL
// server that was down may be up by then).
const ReopenRetry = 30 * time.Second

// Manager owns the install's memory backend and hands out agent handles. The backend follows [memory] and
// [storage.postgres.<alias>]: when a config change names another one, the next use opens it (Refresh does it
// at once) and the old one is closed with the Manager, so turns already using it finish on it. It is safe for
// concurrent use.
type Manager struct {
	o   Options
	log *slog.Logger

	openMu sync.Mutex // serializes (re)opening the shared backend

	mu          sync.Mutex // guards the fields below
	shared      Backend    // sqlite or postgres; nil when the install's backend is none or markdown, or failed
	sharedName  string     // "sqlite" or "postgres.<alias>"
	sharedKey   string     // the settings shared was opened from (sharedSpec); "" before the first open
	sharedErr   error      // why the configured backend is not open
	failedAt    time.Time
	retired     []Backend // backends replaced by a config change, closed with the Manager
	closed      bool
	markdown    map[string]*Markdown
	locks       map[string]string // agent alias => the backend it wrote to (data/memory/backends.json)
	lastHygiene time.Time
	saves       map[pruneKey]int  // auto-saves since the agent's last prune (absent: none since start)
	pruning     map[pruneKey]bool // a prune of the agent's rows is running

	prunes sync.WaitGroup // the prune goroutines; Close waits for them
}

// pruneKey names one agent's rows in one backend.
type pruneKey struct {
	b  Backend
	id string
}

// Open returns the install's memory Manager and opens the backend [memory] names (brain.db is created on first
// use). A backend that cannot be opened (a PostgreSQL server that is down, a damaged brain.db) is logged and
// leaves memory unavailable until a config change or, after ReopenRetry, the next use opens it; only an
// unreadable lock file (data/memory/backends.json) is an error.
func Open(ctx context.Context, o Options) (*Manager, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Manager{o: o, log: o.Logger, markdown: map[string]*Markdown{}, locks: map[string]string{},
		saves: map[pruneKey]int{}, pruning: map[pruneKey]bool{}}
	if err := m.loadLocks(); err != nil {
		return nil, err
	}
	m.sharedFor(ctx, o.Config())
	return m, nil
}

// sharedSpec names the shared backend cfg asks for: its lock name ("" for none and markdown, which have no
// shared store), the settings it is opened from, and how to open it.
func (m *Manager) sharedSpec(cfg *config.Config) (name, key string, open func(ctx context.Context) (Backend, error)) {
	backend := cfg.Memory.Backend
	kind, alias, _ := strings.Cut(backend, ".")
	switch {
	case backend == KindSQLite || backend == "":
		path := filepath.Join(m.o.DataDir, "memory", "brain.db")
		return KindSQLite, "sqlite\x00" + path, func(ctx context.Context) (Backend, error) {
			return OpenSQLite(ctx, path, m.o.Now)
		}
	case kind == KindPostgres:
		st, ok := cfg.Storage.Postgres[alias]
		if !ok {
			return backend, "postgres\x00" + alias + "\x00missing", func(context.Context) (Backend, error) {
				return nil, fmt.Errorf("%w: memory.backend %q: no [storage.postgres.%s]", ErrInvalid, backend, alias)
			}
		}
		return backend, "postgres\x00" + alias + "\x00" + st.DBURL + "\x00" + st.Schema + "\x00" + st.Table,
			func(ctx context.Context) (Backend, error) {
				return OpenPostgres(ctx, PostgresOptions{URL: st.DBURL, Schema: st.Schema, Table: st.Table, Now: m.o.Now})
			}
	}
	return "", "none\x00" + backend, nil
}

// Refresh opens the backend the config in force names when it is not the open one (a config reload changed
// [memory]). The daemon calls it after each config change; every use does the same check.
func (m *Manager) Refresh(ctx context.Context) {
	if m != nil {
		m.sharedFor(ctx, m.o.Config())
	}
}

// sharedFor returns the shared backend cfg names and its lock name, opening it when the config changed since
// the last open (or it failed more than ReopenRetry ago). Nil when there is none or it failed.
func (m *Manager) sharedFor(ctx context.Context, cfg *config.Config) (Backend, string) {
	name, key, open := m.sharedSpec(cfg)
	current := func() (Backend, string, bool) {
		if m.closed || (key == m.sharedKey && (m.sharedErr == nil || m.o.Now().Sub(m.failedAt) < ReopenRetry)) {
			return m.shared, m.sharedName, true
		}
		return nil, "", false
	}
	m.mu.Lock()
	b, n, ok := current()
	m.mu.Unlock()
	if ok {
		return b, n
	}
	m.openMu.Lock()
	defer m.openMu.Unlock()
	m.mu.Lock()
	b, n, ok = current()
	first := m.sharedKey == ""
	m.mu.Unlock()
	if ok {
		return b, n
	}
	var err error
	if open != nil {
		b, err = open(ctx)
		if err != nil {
			b = nil
			m.log.Warn("memory unavailable: agents run without memory", "component", "memory", "backend", name, "err", err)
		}
	}
	m.mu.Lock()
	if m.shared != nil {
		m.retired = append(m.retired, m.shared)
	}
	prev := m.sharedName
	m.shared, m.sharedName, m.sharedKey, m.sharedErr, m.failedAt = b, name, key, err, m.o.Now()
	if b == nil {
		m.sharedName = ""
	}
	var locked []string
	for alias, was := range m.locks {
		if b != nil && was != name && was != KindMarkdown {
			locked = append(locked, alias)
		}
	}
	m.mu.Unlock()
	slices.Sort(locked)
	if !first && b != nil {
		m.log.Info("memory backend opened", "component", "memory", "backend", name, "was", prev)
		if len(locked) > 0 {
			m.log.Warn("agents that keep their memories in another backend refuse memory use until memory.backend names it again",
				"component", "memory", "backend", name, "agents", locked)
		}
	}
	if b != nil && cfg.Memory.HygieneEnabled {
		m.hygiene(ctx, cfg, b)
	}
	if b == nil {
		return nil, ""
	}
	return b, name
}

// Close closes the shared backend and those a config change replaced.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true // no prune starts from now on
	m.mu.Unlock()
	m.prunes.Wait() // each stops at its next batch
	m.openMu.Lock()
	defer m.openMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, b := range append(m.retired, m.shared) {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	m.shared, m.retired = nil, nil
	return errors.Join(errs...)
}

// Shared returns the install-wide backend the config in force names and its name ("sqlite",
// "postgres.<alias>"), or nil.
func (m *Manager) Shared() (Backend, string) { return m.sharedFor(context.Background(), m.o.Config()) }

// For returns the memory handle of agent alias under the config in force: its backend (agents.<alias>.memory,
// else [memory]), its own rows and those of its read_memory_from agents. It fails with ErrLocked when the
// agent has written to another backend than the one configured now.
func (m *Manager) For(ctx context.Context, alias string) (*Scoped, error) {
	cfg := m.o.Config()
	b, name, err := m.backendOf(ctx, cfg, alias)
	if err != nil {
		return nil, err
	}
	if err := m.checkLock(alias, name); err != nil {
		return nil, err
	}
	id, err := b.EnsureAgent(ctx, alias)
	if err != nil {
		return nil, err
	}
	s := &Scoped{b: b, alias: alias, id: id, allowed: []string{id}, namespace: orDefault(cfg.Memory.DefaultNamespace, "default"),
		now: m.o.Now}
	if b.Kind() != KindNone {
		s.onWrite = func(context.Context) error { return m.recordLock(alias, name) }
	}
	if b.Kind() != KindSQLite && b.Kind() != KindPostgres {
		return s, nil
	}
	for _, other := range cfg.Agents[alias].Workspace.ReadMemoryFrom {
		oid, err := b.EnsureAgent(ctx, other)
		if err != nil {
			return nil, err
		}
		s.allowed = append(s.allowed, oid)
	}
	return s, nil
}

// backendOf picks an agent's backend and the name its lock records.
func (m *Manager) backendOf(ctx context.Context, cfg *config.Config, alias string) (Backend, string, error) {
	kind := cfg.Agents[alias].Memory.Backend
	if kind == "" {
		kind, _, _ = strings.Cut(cfg.Memory.Backend, ".")
	}
	switch kind {
	case KindSQLite, KindPostgres, "":
		b, name := m.sharedFor(ctx, cfg)
		if b == nil {
			return nil, "", ErrUnavailable
		}
		return b, name, nil
	case KindMarkdown:
		dir := m.o.Workspace(cfg, alias)
		m.mu.Lock()
		defer m.mu.Unlock()
		md := m.markdown[dir]
		if md == nil {
			md = NewMarkdown(dir)
			m.markdown[dir] = md
		}
		return md, KindMarkdown, nil
	}
	return None{}, KindNone, nil // none, and the kinds not supported yet (qdrant, lucid: config warns)
}

func (m *Manager) lockPath() string { return filepath.Join(m.o.DataDir, "memory", "backends.json") }

func (m *Manager) loadLocks() error {
	b, err := os.ReadFile(m.lockPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = json.Unmarshal(b, &m.locks)
	}
	if err != nil {
		return fmt.Errorf("memory: %s: %w", m.lockPath(), err)
	}
	return nil
}

func (m *Manager) checkLock(alias, name string) error {
	if name == KindNone {
		return nil
	}
	m.mu.Lock()
	was := m.locks[alias]
	m.mu.Unlock()
	if was == "" || was == name {
		return nil
	}
	return fmt.Errorf("%w: agent %q keeps its memories in %q but its memory backend is now %q. Set it back "+
		"(memory.backend or agents.%s.memory.backend = %q), or move the memories yourself and remove %q from %s",
		ErrLocked, alias, was, name, alias, was, alias, m.lockPath())
}

// recordLock notes, before an agent's first write, the backend it writes to.
func (m *Manager) recordLock(alias, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[alias] == name {
		return nil
	}
	if was := m.locks[alias]; was != "" {
		return fmt.Errorf("%w: agent %q keeps its memories in %q", ErrLocked, alias, was)
	}
	next := make(map[string]string, len(m.locks)+1)
	for k, v := range m.locks {
		next[k] = v
	}
	next[alias] = name
	b, _ := json.MarshalIndent(next, "", "  ")
	if err := os.MkdirAll(filepath.Dir(m.lockPath()), 0o700); err != nil {
		return fmt.Errorf("memory: record backend: %w", err)
	}
	tmp := m.lockPath() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("memory: record backend: %w", err)
	}
	if err := os.Rename(tmp, m.lockPath()); err != nil {
		return fmt.Errorf("memory: record backend: %w", err)
	}
	m.locks = next
	return nil
}

// AutoSaveKey is the key of an auto-saved user message: unique per turn, so one message never overwrites
// another (upstream saves every RPC turn under the one key "user_msg").
func AutoSaveKey(turnID string) string { return "user_msg_" + turnID }

// AutoSave stores a turn's user message as a conversation memory of the session when [memory] auto_save is
// on, and runs the retention pass when it is due.
func (m *Manager) AutoSave(ctx context.Context, s *Scoped, turnID, sessionID, text string) error {
	cfg := m.o.Config()
	if !cfg.Memory.AutoSave || strings.TrimSpace(text) == "" || Skipped("", text) {
		return nil
	}
	err := s.Store(ctx, AutoSaveKey(turnID), clipContent(text), CategoryConversation, sessionID)
	if err == nil && cfg.Memory.ConversationMaxRows > 0 {
		m.notePrune(ctx, s, cfg.Memory.ConversationMaxRows)
	}
	if cfg.Memory.HygieneEnabled {
		m.mu.Lock()
		due := m.o.Now().Sub(m.lastHygiene) >= HygieneInterval
		m.mu.Unlock()
		if b, _ := m.sharedFor(ctx, cfg); due && b != nil {
			m.hygiene(ctx, cfg, b)
		}
	}
	return err
}

// pruneBatch is how many rows one prune transaction deletes at most: a large backlog (an install that kept
// every turn before the cap) is cut in several short transactions, so turns' writes interleave with it.
const pruneBatch = 1000

// pruneStep is how many auto-saves of an agent pass between prunes of its rows: the rows stay under max plus
// one step, and a prune's cost (a walk of the agent's newest max rows) is spread over the step's turns.
func pruneStep(max int) int { return 1 + max/16 }

// notePrune counts one auto-save of s's agent and, at the first one since start and then every
// pruneStep(max), starts a prune of its auto-saved rows beyond the newest max, off the turn's path.
func (m *Manager) notePrune(ctx context.Context, s *Scoped, max int) {
	k := pruneKey{s.b, s.id}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, seen := m.saves[k]
	switch {
	case m.closed:
		return
	case m.pruning[k] || (seen && n+1 < pruneStep(max)):
		m.saves[k] = n + 1
		return
	}
	m.saves[k], m.pruning[k] = 0, true
	m.prunes.Add(1)
	go func() {
		defer m.prunes.Done()
		m.prune(context.WithoutCancel(ctx), s.b, s.id, s.alias, max)
		m.mu.Lock()
		delete(m.pruning, k)
		m.mu.Unlock()
	}()
}

// prune deletes agent id's auto-saved conversation memories beyond its newest max in batches, and reports the
// total once (log, OnPrune).
func (m *Manager) prune(ctx context.Context, b Backend, id, alias string, max int) {
	total := 0
	for {
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed && total > 0 {
			break // Close is waiting; the next start prunes the rest
		}
		n, err := b.PruneAutoSaved(ctx, id, max, pruneBatch)
		total += n
		if err != nil {
			m.log.Warn("memory prune failed", "component", "memory", "agent", alias, "err", err)
			break
		}
		if n < pruneBatch {
			break
		}
	}
	if total == 0 {
		return
	}
	reason := fmt.Sprintf("memory.conversation_max_rows = %d", max)
	m.log.Info("memory pruned auto-saved conversation memories", "component", "memory", "agent", alias, "count", total, "reason", reason)
	if m.o.OnPrune != nil {
		m.o.OnPrune(store.Prune{At: m.o.Now(), Store: "memory", What: "auto-saved conversation memories (oldest first)",
			Agent: alias, Rows: total, Reason: reason})
	}
}

// hygiene deletes the memories past their category's retention (0 days keeps them).
func (m *Manager) hygiene(ctx context.Context, cfg *config.Config, b Backend) {
	now := m.o.Now()
	m.mu.Lock()
	m.lastHygiene = now
	m.mu.Unlock()
	for _, r := range []struct {
		category string
		days     int
	}{{CategoryConversation, cfg.Memory.ConversationRetentionDays}, {CategoryDaily, cfg.Memory.DailyRetentionDays},
		{CategoryCore, cfg.Memory.CoreRetentionDays}} {
		if r.days <= 0 {
			continue
		}
		n, err := b.DeleteBefore(ctx, r.category, now.Add(-time.Duration(r.days)*24*time.Hour))
		if err != nil {
			m.log.Warn("memory hygiene failed", "component", "memory", "category", r.category, "err", err)
			continue
		}
		if n > 0 {
			m.log.Info("memory hygiene removed expired memories", "component", "memory", "category", r.category, "count", n)
		}
	}
}
