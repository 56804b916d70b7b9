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
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
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
}

// Manager owns the install's memory backend (chosen by [memory] backend when it opens) and hands out agent
// handles. It is safe for concurrent use.
type Manager struct {
	o          Options
	log        *slog.Logger
	shared     Backend // sqlite or postgres; nil when the install's backend is none or markdown
	sharedName string  // "sqlite" or "postgres.<alias>"

	mu          sync.Mutex // guards the fields below
	markdown    map[string]*Markdown
	locks       map[string]string // agent alias => the backend it wrote to (data/memory/backends.json)
	lastHygiene time.Time
}

// Open opens the backend [memory] names (brain.db is created on first use). The backend stays the same until
// the daemon restarts.
func Open(ctx context.Context, o Options) (*Manager, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Manager{o: o, log: o.Logger, markdown: map[string]*Markdown{}, locks: map[string]string{}}
	if err := m.loadLocks(); err != nil {
		return nil, err
	}
	cfg := o.Config()
	name := cfg.Memory.Backend
	kind, alias, _ := strings.Cut(name, ".")
	switch {
	case name == KindSQLite || name == "":
		db, err := OpenSQLite(ctx, filepath.Join(o.DataDir, "memory", "brain.db"), o.Now)
		if err != nil {
			return nil, err
		}
		m.shared, m.sharedName = db, KindSQLite
	case kind == KindPostgres:
		st, ok := cfg.Storage.Postgres[alias]
		if !ok {
			return nil, fmt.Errorf("%w: memory.backend %q: no [storage.postgres.%s]", ErrInvalid, name, alias)
		}
		pg, err := OpenPostgres(ctx, PostgresOptions{URL: st.DBURL, Schema: st.Schema, Table: st.Table, Now: o.Now})
		if err != nil {
			return nil, err
		}
		m.shared, m.sharedName = pg, name
	}
	if m.shared != nil && cfg.Memory.HygieneEnabled {
		m.hygiene(ctx, cfg)
	}
	return m, nil
}

// Close closes the shared backend.
func (m *Manager) Close() error {
	if m == nil || m.shared == nil {
		return nil
	}
	return m.shared.Close()
}

// Shared returns the install-wide backend and its name ("sqlite", "postgres.<alias>"), or nil.
func (m *Manager) Shared() (Backend, string) { return m.shared, m.sharedName }

// For returns the memory handle of agent alias under the config in force: its backend (agents.<alias>.memory,
// else [memory]), its own rows and those of its read_memory_from agents. It fails with ErrLocked when the
// agent has written to another backend than the one configured now.
func (m *Manager) For(ctx context.Context, alias string) (*Scoped, error) {
	cfg := m.o.Config()
	b, name, err := m.backendOf(cfg, alias)
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
	if b != m.shared {
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
func (m *Manager) backendOf(cfg *config.Config, alias string) (Backend, string, error) {
	kind := cfg.Agents[alias].Memory.Backend
	if kind == "" {
		kind, _, _ = strings.Cut(cfg.Memory.Backend, ".")
	}
	switch kind {
	case KindSQLite, KindPostgres, "":
		if m.shared == nil {
			return nil, "", ErrUnavailable
		}
		return m.shared, m.sharedName, nil
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
	err := s.Store(ctx, AutoSaveKey(turnID), text, CategoryConversation, sessionID)
	if cfg.Memory.HygieneEnabled && m.shared != nil {
		m.mu.Lock()
		due := m.o.Now().Sub(m.lastHygiene) >= HygieneInterval
		m.mu.Unlock()
		if due {
			m.hygiene(ctx, cfg)
		}
	}
	return err
}

// hygiene deletes the memories past their category's retention (0 days keeps them).
func (m *Manager) hygiene(ctx context.Context, cfg *config.Config) {
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
		n, err := m.shared.DeleteBefore(ctx, r.category, now.Add(-time.Duration(r.days)*24*time.Hour))
		if err != nil {
			m.log.Warn("memory hygiene failed", "component", "memory", "category", r.category, "err", err)
			continue
		}
		if n > 0 {
			m.log.Info("memory hygiene removed expired memories", "component", "memory", "category", r.category, "count", n)
		}
	}
}
