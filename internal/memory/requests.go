package memory

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The methods below are the memory/* requests of a client (rpc and the gateway's mirrors) with upstream's
// shapes and defaults. Each names an agent or none: without one it works on the whole install as upstream does
// (Store then writes as storeAgent chooses, Delete removes the key from every agent); with one it uses that agent's
// handle (its own and its read_memory_from memories). A nil Manager, or an install whose backend is not open,
// answers ErrUnavailable.

// DefaultAgent is the agent a store request without one writes as, when the install has an enabled agent of
// that name (see storeAgent).
const DefaultAgent = "default"

// DefaultSearchLimit is how many memories a search without a limit returns.
const DefaultSearchLimit = 10

// DefaultRequestCategory is the category of a stored memory when the request names none (upstream's
// memory/store default; the memory_store tool's is core).
const DefaultRequestCategory = "user"

// PreviewBytes is how much of a memory's content List and Search return (upstream's preview).
const PreviewBytes = 200

// List returns the memories matching f, readable by agent ("" : every agent's), their contents cut to previews.
func (m *Manager) List(ctx context.Context, agent string, f Filter) ([]Entry, error) {
	var entries []Entry
	if agent != "" {
		h, err := m.agent(ctx, agent)
		if err != nil {
			return nil, err
		}
		entries, err = h.List(ctx, f)
		return previews(entries), err
	}
	b, err := m.install()
	if err != nil {
		return nil, err
	}
	entries, err = b.List(ctx, f)
	return previews(entries), err
}

// Search ranks the memories readable by agent ("" : every agent's) against q.Text, at most q.Limit of them
// (0 means DefaultSearchLimit), their contents cut to previews. An empty query or a negative limit is
// ErrInvalid. Only Text, Limit, SessionID, Since and Until of q are used.
func (m *Manager) Search(ctx context.Context, agent string, q Query) ([]Entry, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("%w: query is required", ErrInvalid)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("%w: limit must not be negative", ErrInvalid)
	}
	if err := CheckQuery(q.Text); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	q = Query{Text: q.Text, Limit: q.Limit, SessionID: q.SessionID, Since: q.Since, Until: q.Until}
	if agent != "" {
		h, err := m.agent(ctx, agent)
		if err != nil {
			return nil, err
		}
		entries, err := h.Recall(ctx, q.Text, q.Limit, q.SessionID, q.Since, q.Until)
		return previews(entries), err
	}
	b, err := m.install()
	if err != nil {
		return nil, err
	}
	entries, err := b.Recall(ctx, q)
	return previews(entries), err
}

// Get returns the memory with key readable by agent ("" : any agent's); a key with none is ErrNotFound.
func (m *Manager) Get(ctx context.Context, agent, key string) (Entry, error) {
	if key == "" {
		return Entry{}, fmt.Errorf("%w: key is required", ErrInvalid)
	}
	var e *Entry
	var err error
	if agent != "" {
		var h *Scoped
		if h, err = m.agent(ctx, agent); err == nil {
			e, err = h.Get(ctx, key)
		}
	} else if b, err2 := m.install(); err2 != nil {
		err = err2
	} else {
		e, err = b.Get(ctx, key, nil)
	}
	if err == nil && e == nil {
		err = notFound(key)
	}
	if err != nil {
		return Entry{}, err
	}
	return *e, nil
}

// Store upserts agent's memory under key (agent "" : DefaultAgent; category "" : DefaultRequestCategory).
func (m *Manager) Store(ctx context.Context, agent, key, content, category, sessionID string) error {
	if key == "" || content == "" {
		return fmt.Errorf("%w: key and content are required", ErrInvalid)
	}
	if agent == "" {
		var err error
		if agent, err = m.storeAgent(); err != nil {
			return err
		}
	}
	h, err := m.agent(ctx, agent)
	if err != nil {
		return err
	}
	return h.Store(ctx, key, content, orDefault(category, DefaultRequestCategory), sessionID)
}

// Delete removes agent's own memory with key ("" : the key of every agent). A key with no memory is
// ErrNotFound (upstream answers deleted:true for a key that never existed; a typo deserves better).
func (m *Manager) Delete(ctx context.Context, agent, key string) error {
	if key == "" {
		return fmt.Errorf("%w: key is required", ErrInvalid)
	}
	var found bool
	var err error
	if agent != "" {
		var h *Scoped
		if h, err = m.agent(ctx, agent); err == nil {
			found, err = h.Forget(ctx, key)
		}
	} else if b, err2 := m.install(); err2 != nil {
		err = err2
	} else {
		found, err = b.Forget(ctx, "", key)
	}
	if err == nil && !found {
		err = notFound(key)
	}
	return err
}

func notFound(key string) error { return fmt.Errorf("%w: Memory key `%s` not found", ErrNotFound, key) }

// install is Shared for a request: ErrUnavailable when there is no install-wide backend.
func (m *Manager) install() (Backend, error) {
	if m == nil {
		return nil, ErrUnavailable
	}
	b, _ := m.Shared()
	if b == nil {
		return nil, ErrUnavailable
	}
	return b, nil
}

// agent is For for a request: ErrUnavailable on a nil Manager.
func (m *Manager) agent(ctx context.Context, alias string) (*Scoped, error) {
	if m == nil {
		return nil, ErrUnavailable
	}
	return m.For(ctx, alias)
}

// previews returns entries with each content cut to PreviewBytes (on a character boundary) followed by "…";
// the backend's slice is left as it is.
func previews(entries []Entry) []Entry {
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if len(e.Content) > PreviewBytes {
			cut := PreviewBytes
			for cut > 0 && !utf8.RuneStart(e.Content[cut]) {
				cut--
			}
			e.Content = e.Content[:cut] + "…"
		}
		out = append(out, e)
	}
	return out
}
