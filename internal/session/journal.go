package session

import (
	"context"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/journal"
)

// turnJournal is where one turn of a session is kept (package journal): the chat store for chat sessions, the
// ACP store for ACP sessions. A value serves one turn, which holds the session's turn lock: it loads the model
// context the turn starts from, is the turn's agent.Journal and agent.Starter, and closes the turn.
type turnJournal interface {
	agent.Journal
	agent.Starter
	// Load returns the model context the turn starts from. It is called before Begin.
	Load(ctx context.Context) ([]agent.Message, error)
	// End closes the turn; ok reports whether it ended without an error. An error means the turn was not stored.
	End(ctx context.Context, ok bool) error
}

// acpState is what an ACP session adds to a live session.
type acpState struct {
	surface string
	// mem holds the history when no ACP store is open (the session then lives as long as the process).
	mem journal.Memory
}

// journalOf returns the journal of turn turnID of s, started at started.
func (m *Manager) journalOf(s *session, turnID string, started time.Time) turnJournal {
	if s.acp != nil {
		return &journal.ACP{Store: m.o.ACP, Mem: &s.acp.mem, ID: s.id, TurnID: turnID, Started: started, Now: m.now, Log: m.log}
	}
	return &journal.Chat{Store: m.o.Chat, Key: s.key, Alias: s.alias, Owner: s.owner, TurnID: turnID, Started: started,
		Now: m.now, Log: m.log}
}

// startLogged is a turn's journal whose successful start is published (the runtime log's "turn started").
type startLogged struct {
	turnJournal
	started func()
}

func (j startLogged) Begin(ctx context.Context, prompt string) (bool, error) {
	stored, err := j.turnJournal.Begin(ctx, prompt)
	if err == nil {
		j.started()
	}
	return stored, err
}
