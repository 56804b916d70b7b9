package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
)

// registerMemory adds memory/list|search|get|store|delete with upstream's shapes; the memory Manager does the
// scope routing and the defaults (a nil one answers "Memory subsystem is not available").
func (s *Server) registerMemory(m *memory.Manager) {
	s.register(api.MethodMemoryList, handle(api.GrantMemoryRead, func(ctx context.Context, _ *Peer, p *api.MemoryListParams) (api.MemoryEntriesResult, error) {
		entries, err := m.List(ctx, p.Agent, memory.Filter{Category: p.Category, SessionID: p.SessionID})
		return entriesResult(entries), err
	}))
	s.register(api.MethodMemorySearch, handle(api.GrantMemoryRead, func(ctx context.Context, _ *Peer, p *api.MemorySearchParams) (api.MemoryEntriesResult, error) {
		entries, err := m.Search(ctx, p.Agent, memory.Query{Text: p.Query, Limit: p.Limit, SessionID: p.SessionID, Since: p.Since, Until: p.Until})
		return entriesResult(entries), err
	}))
	s.register(api.MethodMemoryGet, handle(api.GrantMemoryRead, func(ctx context.Context, _ *Peer, p *api.MemoryGetParams) (api.MemoryGetResult, error) {
		e, err := m.Get(ctx, p.Agent, p.Key)
		return api.MemoryGetResult{Entry: e}, err
	}))
	s.register(api.MethodMemoryStore, handle(api.GrantMemoryWrite, func(ctx context.Context, _ *Peer, p *api.MemoryStoreParams) (api.MemoryStoreResult, error) {
		if err := m.Store(ctx, p.Agent, p.Key, p.Content, p.Category, p.SessionID); err != nil {
			return api.MemoryStoreResult{}, err
		}
		return api.MemoryStoreResult{Key: p.Key, Stored: true}, nil
	}))
	s.register(api.MethodMemoryDelete, handle(api.GrantMemoryWrite, func(ctx context.Context, _ *Peer, p *api.MemoryDeleteParams) (api.MemoryDeleteResult, error) {
		if err := m.Delete(ctx, p.Agent, p.Key); err != nil {
			return api.MemoryDeleteResult{}, err
		}
		return api.MemoryDeleteResult{Key: p.Key, Deleted: true}, nil
	}))
}

// entriesResult is the result of list and search: the entries (never null) and their count.
func entriesResult(entries []memory.Entry) api.MemoryEntriesResult {
	if entries == nil {
		entries = []memory.Entry{}
	}
	return api.MemoryEntriesResult{Entries: entries, Count: len(entries)}
}
