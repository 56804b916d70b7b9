package memory

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Scoped is one agent's handle on a backend: writes are stamped with the agent, reads see its own memories
// and those of the agents it may read from (read_memory_from).
type Scoped struct {
	b         Backend
	alias     string
	id        string
	allowed   []string // own id first, then the readable siblings'
	namespace string
	now       func() time.Time
	onWrite   func(ctx context.Context) error // records the backend lock before the first write
}

// Alias returns the agent's alias.
func (s *Scoped) Alias() string { return s.alias }

// Kind returns the backend kind.
func (s *Scoped) Kind() string { return s.b.Kind() }

// Store upserts the agent's memory under key. An empty category means core. A key or content past
// MaxKeyBytes or MaxContentBytes is ErrInvalid.
func (s *Scoped) Store(ctx context.Context, key, content, category, sessionID string) error {
	if err := checkRecord(key, content); err != nil {
		return err
	}
	if s.onWrite != nil {
		if err := s.onWrite(ctx); err != nil {
			return err
		}
	}
	return s.b.Store(ctx, s.id, Record{Key: key, Content: content, Category: orDefault(category, CategoryCore),
		SessionID: sessionID, Namespace: s.namespace, Now: s.now()})
}

// Recall searches the readable memories; since and until are RFC 3339 bounds (either may be empty).
func (s *Scoped) Recall(ctx context.Context, query string, limit int, sessionID, since, until string) ([]Entry, error) {
	return s.b.Recall(ctx, Query{Text: query, Limit: limit, SessionID: sessionID, Since: since, Until: until, Agents: s.allowed})
}

// Get returns the agent's own memory with key, else a readable sibling's; nil when none.
func (s *Scoped) Get(ctx context.Context, key string) (*Entry, error) {
	return s.b.Get(ctx, key, s.allowed)
}

// List returns the readable memories matching f (at most ListCap).
func (s *Scoped) List(ctx context.Context, f Filter) ([]Entry, error) {
	f.Agents = s.allowed
	return s.b.List(ctx, f)
}

// Forget deletes the agent's own memory with key. A key that exists only for another agent is an error
// (ErrForeign), not a miss.
func (s *Scoped) Forget(ctx context.Context, key string) (bool, error) {
	ok, err := s.b.Forget(ctx, s.id, key)
	if err != nil || ok {
		return ok, err
	}
	other, err := s.b.Get(ctx, key, nil)
	if err != nil {
		return false, err
	}
	if other != nil && other.AgentID != nil && *other.AgentID != s.id {
		return false, fmt.Errorf("%w: %q", ErrForeign, key)
	}
	return false, nil
}

// PurgeSession deletes the agent's memories of a session.
func (s *Scoped) PurgeSession(ctx context.Context, sessionID string) (int, error) {
	return s.b.PurgeSession(ctx, s.id, sessionID)
}

// PurgeNamespace deletes the agent's memories of a namespace.
func (s *Scoped) PurgeNamespace(ctx context.Context, namespace string) (int, error) {
	return s.b.PurgeNamespace(ctx, s.id, namespace)
}

// Readable reports whether the memory belongs to an agent this handle may read.
func (s *Scoped) Readable(e Entry) bool {
	return e.AgentID != nil && slices.Contains(s.allowed, *e.AgentID)
}
