package agent

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/journal"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
)

// testJournal is the harness's Journal: each message goes, encoded as the chat store keeps it, to append (to
// appendLast for the answer of a turn without tools, when set). Tests replace the functions to watch or fail
// the writes.
type testJournal struct {
	append, appendLast func(ctx context.Context, role, content string) error
}

func (j *testJournal) Append(ctx context.Context, m provider.Message) error {
	return j.append(ctx, m.Role, journal.ChatContent(m, false))
}

func (j *testJournal) AppendResult(ctx context.Context, m provider.Message, failed bool) error {
	return j.append(ctx, m.Role, journal.ChatContent(m, failed))
}

func (j *testJournal) AppendLast(ctx context.Context, m provider.Message) error {
	if j.appendLast == nil {
		return j.Append(ctx, m)
	}
	return j.appendLast(ctx, m.Role, journal.ChatContent(m, false))
}

// startingJournal is a testJournal that starts the turn itself (a Starter) with begin.
type startingJournal struct {
	*testJournal
	begin func(ctx context.Context) (bool, error)
}

func (j startingJournal) Begin(ctx context.Context, _ string) (bool, error) { return j.begin(ctx) }

// journalOf is the harness journal of a turn the harness built.
func journalOf(tr *Turn) *testJournal { return tr.Journal.(*testJournal) }

// beginWith makes tr's journal start the turn with begin.
func beginWith(tr *Turn, begin func(ctx context.Context) (bool, error)) {
	tr.Journal = startingJournal{journalOf(tr), begin}
}

// testEvents records the turn's events in the harness; elicit, when set, answers questions (else no client can).
type testEvents struct {
	h      *harness
	elicit func(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error)
}

func (e *testEvents) Update(ev api.SessionUpdate) {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	e.h.events = append(e.h.events, ev)
}

func (e *testEvents) Elicit(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error) {
	if e.elicit == nil {
		return api.ElicitationResult{}, ErrNoElicitation
	}
	return e.elicit(ctx, p)
}

// eventsOf is the harness events of a turn the harness built.
func eventsOf(tr *Turn) *testEvents { return tr.Events.(*testEvents) }

// usageMeter records the usage of each request in the harness and checks no budget.
type usageMeter struct{ h *harness }

func (usageMeter) Check() (string, error) { return "", nil }

func (u usageMeter) Record(_ context.Context, usage provider.Usage) error {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	u.h.usage = append(u.h.usage, usage)
	return nil
}
