// Package memory is what agents remember across sessions: an install-wide store of keyed facts scoped by agent
// (SQLite brain.db, PostgreSQL, per-agent markdown files, or none), keyword recall, and the [Memory context]
// block injected into turns (upstream/memory.md).
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Entry is one stored memory (the wire shape).
type Entry = api.MemoryEntry

// Categories with a meaning; any other string is a custom category stored verbatim.
const (
	CategoryCore         = "core"
	CategoryDaily        = "daily"
	CategoryConversation = "conversation"
)

// Backend names.
const (
	KindSQLite   = "sqlite"
	KindPostgres = "postgres"
	KindMarkdown = "markdown"
	KindNone     = "none"
)

var (
	// ErrUnavailable reports that no memory store is open.
	ErrUnavailable = errors.New("memory: Memory subsystem is not available")
	// ErrNotFound reports a key with no memory.
	ErrNotFound = errors.New("memory: not found")
	// ErrInvalid reports bad input (empty key, bad date, since after until).
	ErrInvalid = errors.New("memory: invalid request")
	// ErrForeign reports a write aimed at a memory another agent owns.
	ErrForeign = errors.New("memory: the memory belongs to another agent")
	// ErrLocked reports an agent whose memories live in another backend than the one configured now.
	ErrLocked = errors.New("memory: backend locked")
	// ErrUnsupported reports an operation the backend cannot do.
	ErrUnsupported = errors.New("memory: not supported by this backend")
)

// Record is one memory to store (upsert by agent and key).
type Record struct {
	Key, Content, Category string
	SessionID              string // "" stores no session
	Namespace              string // "" means "default"
	Now                    time.Time
}

// Query is a recall. Agents restricts the rows to those agents' (nil: every agent). An empty Text or "*" lists
// the most recent memories. Since and Until are RFC 3339 bounds on the creation time, compared as text as
// upstream does.
type Query struct {
	Text         string
	Limit        int
	SessionID    string
	Since, Until string
	Agents       []string
	// ExcludeCategory leaves one category out of the ranking (injection leaves out conversation memories,
	// which it never shows, so they cannot push facts out of the recall).
	ExcludeCategory string
}

// Filter selects memories for list and export.
type Filter struct {
	Category, SessionID, Namespace string
	Since, Until                   string
	Agents                         []string
}

// Backend is one memory store. Every method is safe for concurrent use. Agent ids come from EnsureAgent.
type Backend interface {
	// Kind is the backend's name: sqlite, postgres, markdown or none.
	Kind() string
	// EnsureAgent returns the id of the agent with alias, creating it if needed.
	EnsureAgent(ctx context.Context, alias string) (string, error)
	// Store upserts r as agentID's memory under r.Key; the creation time of an existing row is kept.
	Store(ctx context.Context, agentID string, r Record) error
	// Recall ranks memories against q (keyword search, scores in [0,1], best first).
	Recall(ctx context.Context, q Query) ([]Entry, error)
	// Get returns the memory with key of the first of agents that has one (nil agents: any agent); nil when none.
	Get(ctx context.Context, key string, agents []string) (*Entry, error)
	// List returns memories newest first, at most 1000 (upstream's cap).
	List(ctx context.Context, f Filter) ([]Entry, error)
	// Forget deletes agentID's memory with key ("" : every agent's) and reports whether one existed.
	Forget(ctx context.Context, agentID, key string) (bool, error)
	// PurgeSession deletes agentID's memories of a session; PurgeNamespace those of a namespace.
	PurgeSession(ctx context.Context, agentID, sessionID string) (int, error)
	PurgeNamespace(ctx context.Context, agentID, namespace string) (int, error)
	// DeleteBefore deletes every agent's memories of category created before t (retention).
	DeleteBefore(ctx context.Context, category string, t time.Time) (int, error)
	// PruneAutoSaved deletes at most batch of agentID's auto-saved conversation memories (AutoSaveKey keys,
	// category conversation), oldest first, beyond its newest keep, and reports how many it deleted.
	PruneAutoSaved(ctx context.Context, agentID string, keep, batch int) (int, error)
	Close() error
}

// ListCap is the most rows list returns (upstream's hard cap).
const ListCap = 1000

// recentQuery reports whether q asks for the most recent memories rather than a search.
func recentQuery(q string) bool {
	q = strings.TrimSpace(q)
	return q == "" || q == "*"
}

// stamp formats t as upstream writes memory times: RFC 3339 with the local offset.
func stamp(t time.Time) string { return t.Local().Format(time.RFC3339Nano) }

func ptr[T any](v T) *T { return &v }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rawKind decodes a stored kind column (JSON of upstream's MemoryKind); text that is not JSON is kept as a string.
func rawKind(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}
