package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// turnMemory is one turn's link to its agent's memory (agent.MemoryHook).
type turnMemory struct {
	m         *Manager
	h         *memory.Scoped
	turnID    string
	sessionID string // the stored session key: auto-saved messages belong to it
	access    tools.MemoryAccess
}

// memoryAccess is what o may do with the memory of a turn in s: the owner everything; anyone else what its
// grants allow (memory:read, memory:write, as the memory/* methods ask), and only on the memories of the
// sessions stored as its own.
func (m *Manager) memoryAccess(s *session, o Owner) tools.MemoryAccess {
	if o.Admin {
		return tools.MemoryAccess{}
	}
	return tools.MemoryAccess{
		Restricted: true,
		Read:       o.allows(api.GrantMemoryRead),
		Write:      o.allows(api.GrantMemoryWrite),
		SessionKey: s.key,
		OwnsSession: func(ctx context.Context, key string) bool {
			if key == s.key {
				return s.owner == o.Principal
			}
			meta, err := m.o.Chat.Meta(ctx, key)
			return err == nil && meta.Owner != "" && meta.Owner == o.Principal
		},
	}
}

// memoryFor returns the memory of a chat session's turn, or nil when the session has none (no memory manager,
// an ACP session, a backend that is not available). An agent whose backend is locked fails the turn with the
// hint.
func (m *Manager) memoryFor(ctx context.Context, s *session, o Owner, turnID string) (*turnMemory, error) {
	if m.o.Memory == nil || s.acp != nil {
		return nil, nil
	}
	h, err := m.o.Memory.For(ctx, s.alias)
	switch {
	case errors.Is(err, memory.ErrLocked):
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	case errors.Is(err, memory.ErrUnavailable):
		return nil, nil
	case err != nil:
		m.log.Warn("memory unavailable for this turn", "session", s.id, "err", err)
		return nil, nil
	}
	return &turnMemory{m: m, h: h, turnID: turnID, sessionID: s.key, access: m.memoryAccess(s, o)}, nil
}

// equip gives turn tr this memory: the recall and the auto-save (agent.MemoryHook), and the memory_* tools,
// which act with the access of the principal the turn runs for.
func (t *turnMemory) equip(tr *agent.Turn) {
	tr.Memory, tr.ToolEnv.Memory, tr.ToolEnv.MemoryAccess = t, t.h, t.access
}

// Context implements agent.MemoryHook. RPC turns recall across the agent's sessions and leave conversation
// memories out, as upstream does for a turn without a memory session.
func (t *turnMemory) Context(ctx context.Context, message string) string {
	cfg := t.m.o.Config()
	block, err := t.h.Context(ctx, message, memory.InjectOptions{MinRelevance: cfg.Memory.MinRelevanceScore,
		ExcludeConversation: true, Now: t.m.now(), Keep: t.access.Keeps(ctx)})
	if err != nil {
		t.m.log.Warn("memory recall failed", "turn", t.turnID, "err", err)
	}
	return block
}

// Save implements agent.MemoryHook.
func (t *turnMemory) Save(ctx context.Context, message string) {
	if err := t.m.o.Memory.AutoSave(ctx, t.h, t.turnID, t.sessionID, message); err != nil {
		t.m.log.Warn("memory auto-save failed", "turn", t.turnID, "err", err)
	}
}

var _ agent.MemoryHook = (*turnMemory)(nil)
