package session

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// journal is where one session's turns are kept: the chat store (sessions.db) for chat sessions, the ACP store
// (acp-sessions.db) for ACP sessions. A journal value serves one turn, which holds the session's turn lock.
type journal interface {
	// load returns the model context the turn starts from.
	load(ctx context.Context) ([]agent.Message, error)
	// begin notes that turnID started with prompt, and may store the prompt as the turn's user message with it
	// (storedPrompt; the turn then does not append it again). An error means the turn must not run (its session
	// rows could not be written); a failure to note the start alone is logged and the turn runs anyway.
	begin(ctx context.Context, turnID string, started time.Time, prompt string) (storedPrompt bool, err error)
	// append is the turn's agent.Turn.Append.
	append(ctx context.Context, role, content string) error
	// appendLast is the turn's agent.Turn.AppendLast: the answer of a turn that ends without tools.
	appendLast(ctx context.Context, role, content string) error
	// end closes the turn; ok reports whether it ended without an error. An error means the turn was not stored.
	end(ctx context.Context, turnID string, ok bool) error
}

// journalOf returns a journal for one turn of s.
func (m *Manager) journalOf(s *session) journal {
	if s.acp != nil {
		return &acpJournal{m: m, s: s}
	}
	return &chatJournal{m: m, s: s, key: s.key}
}

// chatJournal appends every message to the chat store as it is produced and tracks the turn in the session's
// state columns.
type chatJournal struct {
	m   *Manager
	s   *session
	key string // the session's stored key in sessions.db (rpc_<id>, or what an older row is stored under)

	idle bool // appendLast stored the answer and the idle state together: end has nothing left to write
}

func (j *chatJournal) load(ctx context.Context) ([]agent.Message, error) {
	return agent.LoadHistory(ctx, j.m.o.Chat, j.key)
}

// begin re-creates the session's rows with the owner if a delete that raced this incarnation's session/new removed
// them (under the turn lock, which the delete takes too), marks the session running and stores the prompt
// (store.Chat.BeginTurn: one commit on SQLite where there were three). prompt is "" when the turn
// was already cancelled: the turn's own append then reports the cancel and stores nothing, as before.
func (j *chatJournal) begin(ctx context.Context, turnID string, started time.Time, prompt string) (bool, error) {
	_, err := j.m.o.Chat.BeginTurn(ctx, j.key, j.s.alias, j.s.owner, turnID, started, prompt)
	return err == nil && prompt != "", err
}

func (j *chatJournal) append(ctx context.Context, role, content string) error {
	_, err := j.m.o.Chat.Append(ctx, j.key, role, content, j.m.now())
	return err
}

// appendLast stores the answer and marks the session idle (store.Chat.EndTurn: one transaction on SQLite); a turn whose
// answer is stored this way ends without an error (Run returns it as completed, or cancelled right after), so
// end would write idle too.
func (j *chatJournal) appendLast(ctx context.Context, role, content string) error {
	if _, err := j.m.o.Chat.EndTurn(ctx, j.key, role, content, j.m.now(), stateIdle); err != nil {
		return err
	}
	j.idle = true
	return nil
}

func (j *chatJournal) end(ctx context.Context, turnID string, ok bool) error {
	if ok && j.idle {
		return nil
	}
	state := stateIdle
	if !ok {
		state = stateError
	}
	if err := j.m.o.Chat.SetState(ctx, j.key, state, "", nil); err != nil {
		j.m.log.Warn("set state", "session", j.key, "turn", turnID, "err", err)
	}
	return nil
}

// acpState is what an ACP session adds to a live session.
type acpState struct {
	surface string
	// mem holds the history when no ACP store is open (the session then lives as long as the process). Only the
	// turn holding the session's turn lock touches it.
	memMu sync.Mutex
	mem   []store.ACPMessage
}

// acpJournal records the turn's messages and stores them at its end in one transaction (state.md §6): the turn
// is then either wholly in acp-sessions.db or, after a crash, only noted as started in its checkpoint row.
type acpJournal struct {
	m   *Manager
	s   *session
	rec agent.TurnRecorder

	// base is the model context the turn started from (load), and stored whether the turn's messages were stored
	// (end): what a compaction after the turn starts from.
	base   []agent.Message
	stored bool
}

// load rebuilds the model context from the latest checkpoint: its snapshot and the messages after its boundary,
// or the whole stored history when no compaction wrote a snapshot (protocol.md §6.3).
func (j *acpJournal) load(ctx context.Context) ([]agent.Message, error) {
	if j.m.o.ACP == nil {
		j.s.acp.memMu.Lock()
		defer j.s.acp.memMu.Unlock()
		return agent.ACPHistory(j.s.acp.mem), nil
	}
	cp, ok, err := j.m.o.ACP.Checkpoint(ctx, j.s.id)
	if err != nil {
		return nil, err
	}
	msgs, err := j.m.o.ACP.Messages(ctx, j.s.id)
	if err != nil {
		return nil, err
	}
	var snapshot *string
	if ok {
		snapshot = cp.Snapshot
	}
	if j.base, err = agent.ACPContext(snapshot, cp.BoundaryMessageID, msgs); err != nil {
		return nil, fmt.Errorf("session: %s: %w", j.s.id, err)
	}
	return j.base, nil
}

func (j *acpJournal) begin(ctx context.Context, turnID string, started time.Time, prompt string) (bool, error) {
	if j.m.o.ACP == nil {
		return false, nil
	}
	if err := j.m.o.ACP.BeginTurn(ctx, j.s.id, turnID, prompt, started); err != nil {
		j.m.log.Warn("acp: record turn start", "session", j.s.id, "turn", turnID, "err", err)
	}
	return false, nil
}

func (j *acpJournal) append(ctx context.Context, role, content string) error {
	return j.rec.Append(ctx, role, content)
}

func (j *acpJournal) appendLast(ctx context.Context, role, content string) error {
	return j.append(ctx, role, content)
}

func (j *acpJournal) end(ctx context.Context, turnID string, _ bool) error {
	msgs := j.rec.Messages()
	if j.m.o.ACP == nil {
		j.s.acp.memMu.Lock()
		j.s.acp.mem = append(j.s.acp.mem, msgs...)
		j.s.acp.memMu.Unlock()
		return nil
	}
	if err := j.m.o.ACP.AppendTurn(ctx, j.s.id, msgs, j.m.now()); err != nil {
		return fmt.Errorf("session: store turn %s of %s: %w", turnID, j.s.id, err)
	}
	j.stored = true
	return nil
}

// compact runs after a stored turn: when the model context, this turn included, passes the agent's budget
// (agents.<alias>.max_context_tokens), it writes the retained context and the boundary it covers in one
// transaction and only then emits history_trimmed. A failed write emits nothing and the context stays whole.
func (j *acpJournal) compact(ctx context.Context, budget int, emit func(api.SessionUpdate)) {
	msgs := j.rec.Messages()
	if !j.stored || budget <= 0 || len(msgs) == 0 {
		return
	}
	full := append(slices.Clone(j.base), agent.ACPHistory(msgs)...)
	if agent.EstimateTokens(full) <= budget {
		return
	}
	kept, turns, dropped := agent.Retain(full, budget)
	if dropped == 0 {
		return
	}
	boundary := msgs[len(msgs)-1].ID
	gen, err := j.m.o.ACP.Compact(ctx, j.s.id, agent.EncodeSnapshot(kept), boundary, j.m.now())
	if err != nil {
		j.m.log.Warn("acp: compaction not written; the model context stays whole", "session", j.s.id, "err", err)
		return
	}
	j.m.log.Debug("acp: model context compacted", "session", j.s.id, "generation", gen, "dropped", dropped, "kept_turns", turns)
	emit(api.SessionUpdate{Type: api.UpdateHistoryTrimmed, DroppedMessages: &dropped, KeptTurns: &turns, Reason: agent.CompactReason})
}
