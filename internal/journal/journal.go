// Package journal is the durable record of a session's turns: where a turn's model context is read from and its
// messages are written to. Chat sessions keep theirs in the chat store (sessions.db or the JSONL files), one row
// per message as the turn produces it (Chat); ACP sessions in the ACP store (acp-sessions.db), the whole turn in
// one transaction at its end, with the compaction of the model context (ACP). Both are an agent.Journal and an
// agent.Starter for the turn they serve; the row codecs of both stores live here too.
package journal

import (
	"context"
	"log/slog"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Turn states as the chat store keeps them (session_metadata.state) and session/state reports them.
const (
	StateIdle    = "idle"
	StateRunning = "running"
	StateError   = "error"
)

// Chat is one turn's journal in the chat store: every message is appended as the turn produces it, and the turn
// is tracked in the session's state columns. A Chat serves one turn, which holds its session's turn lock; fill
// it, use it, and discard it.
type Chat struct {
	Store store.Chat
	// Key is the session's stored key (rpc_<id>, or what an older row is stored under); Alias and Owner are its
	// agent and owner, with which Begin re-creates its rows if a delete removed them.
	Key, Alias, Owner string
	TurnID            string
	Started           time.Time
	Now               func() time.Time
	Log               *slog.Logger

	idle bool // AppendLast stored the answer and the idle state together: End has nothing left to write
}

// Load returns the model context the turn starts from: the session's whole stored history.
func (j *Chat) Load(ctx context.Context) ([]provider.Message, error) {
	return LoadHistory(ctx, j.Store, j.Key)
}

// Begin re-creates the session's rows with the owner if a delete that raced this incarnation's session/new removed
// them (under the turn lock, which the delete takes too), marks the session running and stores the prompt
// (store.Chat.BeginTurn: one commit on SQLite where there were three). It implements agent.Starter.
func (j *Chat) Begin(ctx context.Context, prompt string) (bool, error) {
	_, err := j.Store.BeginTurn(ctx, j.Key, j.Alias, j.Owner, j.TurnID, j.Started, prompt)
	return err == nil && prompt != "", err
}

// Append implements agent.Journal.
func (j *Chat) Append(ctx context.Context, m provider.Message) error {
	_, err := j.Store.Append(ctx, j.Key, m.Role, ChatContent(m, false), j.Now())
	return err
}

// AppendResult implements agent.Journal.
func (j *Chat) AppendResult(ctx context.Context, m provider.Message, failed bool) error {
	_, err := j.Store.Append(ctx, j.Key, m.Role, ChatContent(m, failed), j.Now())
	return err
}

// AppendLast stores the answer and marks the session idle (store.Chat.EndTurn: one transaction on SQLite); a turn
// whose answer is stored this way ends without an error (Run returns it as completed, or cancelled right after),
// so End would write idle too.
func (j *Chat) AppendLast(ctx context.Context, m provider.Message) error {
	if _, err := j.Store.EndTurn(ctx, j.Key, m.Role, ChatContent(m, false), j.Now(), StateIdle); err != nil {
		return err
	}
	j.idle = true
	return nil
}

// End closes the turn: the session goes idle, or to the error state when the turn did not end well (ok false).
// A failure to write the state is logged: the turn's messages are stored already, so End never fails.
func (j *Chat) End(ctx context.Context, ok bool) error {
	if ok && j.idle {
		return nil
	}
	state := StateIdle
	if !ok {
		state = StateError
	}
	if err := j.Store.SetState(ctx, j.Key, state, "", nil); err != nil {
		j.Log.Warn("set state", "session", j.Key, "turn", j.TurnID, "err", err)
	}
	return nil
}
