package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
)

// previewBytes is how much of a memory's content list and search return (upstream's preview).
const previewBytes = 200

// registerMemory adds memory/list|search|get|store|delete with upstream's shapes. Without an agent they work
// on the whole install as upstream does (store then writes as the "default" agent, delete removes the key
// from every agent); with one they use that agent's handle (its own and its read_memory_from memories).
func (s *Server) registerMemory(m *memory.Manager) {
	s.register(api.MethodMemoryList, handle(api.GrantMemoryRead, func(ctx context.Context, _ *Peer, p *api.MemoryListParams) (api.MemoryEntriesResult, error) {
		f := memory.Filter{Category: p.Category, SessionID: p.SessionID}
		var entries []memory.Entry
		var err error
		if p.Agent != "" {
			var h *memory.Scoped
			if h, err = agentMemory(ctx, m, p.Agent); err == nil {
				entries, err = h.List(ctx, f)
			}
		} else if b, err2 := shared(m); err2 != nil {
			err = err2
		} else {
			entries, err = b.List(ctx, f)
		}
		return previews(entries), err
	}))
	s.register(api.MethodMemorySearch, handle(api.GrantMemoryRead, func(ctx context.Context, _ *Peer, p *api.MemorySearchParams) (api.MemoryEntriesResult, error) {
		if strings.TrimSpace(p.Query) == "" {
			return api.MemoryEntriesResult{}, fmt.Errorf("%w: query is required", memory.ErrInvalid)
		}
		if p.Limit < 0 {
			return api.MemoryEntriesResult{}, fmt.Errorf("%w: limit must not be negative", memory.ErrInvalid)
		}
		if err := memory.CheckQuery(p.Query); err != nil {
			return api.MemoryEntriesResult{}, err
		}
		limit := p.Limit
		if limit == 0 {
			limit = 10
		}
		q := memory.Query{Text: p.Query, Limit: limit, SessionID: p.SessionID, Since: p.Since, Until: p.Until}
		if p.Agent != "" {
			h, err := agentMemory(ctx, m, p.Agent)
			if err != nil {
				return api.MemoryEntriesResult{}, err
			}
			entries, err := h.Recall(ctx, q.Text, q.Limit, q.SessionID, q.Since, q.Until)
			return previews(entries), err
		}
		b, err := shared(m)
		if err != nil {
			return api.MemoryEntriesResult{}, err
		}
		entries, err := b.Recall(ctx, q)
		return previews(entries), err
	}))
	s.register(api.MethodMemoryGet, handle(api.GrantMemoryRead, func(ctx context.Context, _ *Peer, p *api.MemoryGetParams) (api.MemoryGetResult, error) {
		if p.Key == "" {
			return api.MemoryGetResult{}, fmt.Errorf("%w: key is required", memory.ErrInvalid)
		}
		var e *memory.Entry
		var err error
		if p.Agent != "" {
			var h *memory.Scoped
			if h, err = agentMemory(ctx, m, p.Agent); err == nil {
				e, err = h.Get(ctx, p.Key)
			}
		} else if b, err2 := shared(m); err2 != nil {
			err = err2
		} else {
			e, err = b.Get(ctx, p.Key, nil)
		}
		if err == nil && e == nil {
			err = fmt.Errorf("%w: Memory key `%s` not found", memory.ErrNotFound, p.Key)
		}
		if err != nil {
			return api.MemoryGetResult{}, err
		}
		return api.MemoryGetResult{Entry: *e}, nil
	}))
	s.register(api.MethodMemoryStore, handle(api.GrantMemoryWrite, func(ctx context.Context, _ *Peer, p *api.MemoryStoreParams) (api.MemoryStoreResult, error) {
		if p.Key == "" || p.Content == "" {
			return api.MemoryStoreResult{}, fmt.Errorf("%w: key and content are required", memory.ErrInvalid)
		}
		h, err := agentMemory(ctx, m, orDefaultAgent(p.Agent))
		if err != nil {
			return api.MemoryStoreResult{}, err
		}
		cat := p.Category
		if cat == "" {
			cat = "user"
		}
		if err := h.Store(ctx, p.Key, p.Content, cat, p.SessionID); err != nil {
			return api.MemoryStoreResult{}, err
		}
		return api.MemoryStoreResult{Key: p.Key, Stored: true}, nil
	}))
	s.register(api.MethodMemoryDelete, handle(api.GrantMemoryWrite, func(ctx context.Context, _ *Peer, p *api.MemoryDeleteParams) (api.MemoryDeleteResult, error) {
		if p.Key == "" {
			return api.MemoryDeleteResult{}, fmt.Errorf("%w: key is required", memory.ErrInvalid)
		}
		var found bool
		var err error
		if p.Agent != "" {
			var h *memory.Scoped
			if h, err = agentMemory(ctx, m, p.Agent); err == nil {
				found, err = h.Forget(ctx, p.Key)
			}
		} else if b, err2 := shared(m); err2 != nil {
			err = err2
		} else {
			found, err = b.Forget(ctx, "", p.Key)
		}
		if err == nil && !found { // upstream answers deleted:true for a key that never existed; a typo deserves better
			err = fmt.Errorf("%w: Memory key `%s` not found", memory.ErrNotFound, p.Key)
		}
		if err != nil {
			return api.MemoryDeleteResult{}, err
		}
		return api.MemoryDeleteResult{Key: p.Key, Deleted: true}, nil
	}))
}

func orDefaultAgent(a string) string {
	if a == "" {
		return "default"
	}
	return a
}

func shared(m *memory.Manager) (memory.Backend, error) {
	if m == nil {
		return nil, memory.ErrUnavailable
	}
	b, _ := m.Shared()
	if b == nil {
		return nil, memory.ErrUnavailable
	}
	return b, nil
}

func agentMemory(ctx context.Context, m *memory.Manager, alias string) (*memory.Scoped, error) {
	if m == nil {
		return nil, memory.ErrUnavailable
	}
	return m.For(ctx, alias)
}

// previews cuts each content to previewBytes (on a character boundary) followed by "…".
func previews(entries []memory.Entry) api.MemoryEntriesResult {
	out := api.MemoryEntriesResult{Entries: make([]api.MemoryEntry, 0, len(entries)), Count: len(entries)}
	for _, e := range entries {
		if len(e.Content) > previewBytes {
			cut := previewBytes
			for cut > 0 && !utf8.RuneStart(e.Content[cut]) {
				cut--
			}
			e.Content = e.Content[:cut] + "…"
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}

// memoryCode maps memory errors: bad requests are -32602; a missing key is the not-found code (upstream's
// -32603 made it look like a daemon failure); an absent store is -32603.
func memoryCode(err error) (int, bool) {
	switch {
	case errors.Is(err, memory.ErrInvalid), errors.Is(err, memory.ErrForeign), errors.Is(err, memory.ErrLocked):
		return api.CodeInvalidParams, true
	case errors.Is(err, memory.ErrNotFound):
		return api.CodeNotFound, true
	case errors.Is(err, memory.ErrUnavailable), errors.Is(err, memory.ErrUnsupported):
		return api.CodeInternalError, true
	}
	return 0, false
}
