package journal

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Memory holds an ACP session's history when no ACP store is open: the session then lives as long as the
// process. It is safe for concurrent use.
type Memory struct {
	mu   sync.Mutex
	msgs []store.ACPMessage
}

// Messages returns a copy of the history, oldest first.
func (m *Memory) Messages() []store.ACPMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.msgs)
}

func (m *Memory) add(msgs []store.ACPMessage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, msgs...)
}

// ACP is one turn's journal in the ACP store: it records the turn's messages and stores them at its end in one
// transaction (state.md §6), so the turn is either wholly in acp-sessions.db or, after a crash, only noted as
// started in its checkpoint row. An ACP serves one turn, which holds its session's turn lock.
type ACP struct {
	// Store is the ACP store; nil keeps the history in Mem.
	Store *store.ACPStore
	Mem   *Memory
	// ID is the session's id; TurnID and Started are what Begin notes in its checkpoint row, with the prompt.
	ID, TurnID string
	Started    time.Time
	Now        func() time.Time
	Log        *slog.Logger

	rec Recorder
	// base is the model context the turn started from (Load), and stored whether the turn's messages were
	// stored (End): what a compaction after the turn starts from.
	base   []provider.Message
	stored bool
}

// Load rebuilds the model context from the latest checkpoint: its snapshot and the messages after its boundary,
// or the whole stored history when no compaction wrote a snapshot (protocol.md §6.3).
func (j *ACP) Load(ctx context.Context) ([]provider.Message, error) {
	if j.Store == nil {
		return ACPHistory(j.Mem.Messages()), nil
	}
	cp, ok, err := j.Store.Checkpoint(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	msgs, err := j.Store.Messages(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	var snapshot *string
	if ok {
		snapshot = cp.Snapshot
	}
	if j.base, err = ACPContext(snapshot, cp.BoundaryMessageID, msgs); err != nil {
		return nil, fmt.Errorf("journal: acp context of %s: %w", j.ID, err)
	}
	return j.base, nil
}

// Begin notes the turn's start in the session's checkpoint row; a failure is logged and the turn runs anyway.
// The prompt is stored with the rest of the turn, by End. It implements agent.Starter.
func (j *ACP) Begin(ctx context.Context, prompt string) (bool, error) {
	if j.Store == nil {
		return false, nil
	}
	if err := j.Store.BeginTurn(ctx, j.ID, j.TurnID, prompt, j.Started); err != nil {
		j.Log.Warn("acp: record turn start", "session", j.ID, "turn", j.TurnID, "err", err)
	}
	return false, nil
}

// Append implements agent.Journal: the message is recorded, and stored by End.
func (j *ACP) Append(_ context.Context, m provider.Message) error {
	j.rec.Add(m)
	return nil
}

// AppendResult implements agent.Journal.
func (j *ACP) AppendResult(_ context.Context, m provider.Message, failed bool) error {
	j.rec.AddResult(m, failed)
	return nil
}

// AppendLast implements agent.Journal; it is Append.
func (j *ACP) AppendLast(ctx context.Context, m provider.Message) error { return j.Append(ctx, m) }

// End stores the turn's messages in one transaction (in Mem without a store), whatever the turn's outcome. An
// error means the turn was not stored.
func (j *ACP) End(ctx context.Context, _ bool) error {
	msgs := j.rec.Messages()
	if j.Store == nil {
		j.Mem.add(msgs)
		return nil
	}
	if err := j.Store.AppendTurn(ctx, j.ID, msgs, j.Now()); err != nil {
		return err
	}
	j.stored = true
	return nil
}

// Compact runs after a stored turn: when the model context, this turn included, passes budget (the agent's
// max_context_tokens), it writes the retained context and the boundary it covers in one transaction. It returns
// how many messages were dropped (0: nothing was compacted) and how many turns were kept, for the
// history_trimmed event the caller sends only then. A failed write compacts nothing: the context stays whole.
func (j *ACP) Compact(ctx context.Context, budget int) (dropped, keptTurns int) {
	msgs := j.rec.Messages()
	if !j.stored || budget <= 0 || len(msgs) == 0 {
		return 0, 0
	}
	full := append(slices.Clone(j.base), ACPHistory(msgs)...)
	if EstimateTokens(full) <= budget {
		return 0, 0
	}
	kept, turns, dropped := Retain(full, budget)
	if dropped == 0 {
		return 0, 0
	}
	boundary := msgs[len(msgs)-1].ID
	gen, err := j.Store.Compact(ctx, j.ID, EncodeSnapshot(kept), boundary, j.Now())
	if err != nil {
		j.Log.Warn("acp: compaction not written; the model context stays whole", "session", j.ID, "err", err)
		return 0, 0
	}
	j.Log.Debug("acp: model context compacted", "session", j.ID, "generation", gen, "dropped", dropped, "kept_turns", turns)
	return dropped, turns
}
