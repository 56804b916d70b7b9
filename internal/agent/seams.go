package agent

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
)

// A turn talks to the rest of the daemon through four small seams, each implemented by the layer that owns the
// thing: a Journal (the durable record of the turn, package journal for chat and ACP sessions), Events (what the
// client that sent the prompt sees), an Approver (who decides the calls the policy asks about) and a Meter (what
// the turn costs, and the budgets that may stop it). The turn itself knows no store, no connection and no
// ledger: it speaks provider messages and session updates, and the session layer builds one of each per turn.

// Journal is the durable record of one turn: its prompt, answers, tool calls and tool results, appended in the
// order the turn produces them. The messages are the ones the turn sends the model (provider roles user,
// assistant, tool); how they are stored is the journal's business. Its methods are called from Run's goroutine
// only. A journal that also implements Starter starts the turn itself.
type Journal interface {
	// Append durably stores one message (one transaction per call): the prompt (role user), an answer or the part
	// of one that was streamed before the turn stopped (role assistant), or an assistant message with the tool
	// calls it made (ToolCalls set). Run stops the turn when it fails.
	Append(ctx context.Context, m provider.Message) error
	// AppendResult stores the result of one tool call (m.Role is tool, ToolCallID and Name set); failed reports
	// that the call did not do what it was asked (an error, a refusal, a denial). It has Append's contract.
	AppendResult(ctx context.Context, m provider.Message, failed bool) error
	// AppendLast stores the answer of a turn that ends without tools, in place of Append: the journal may end the
	// turn in the same transaction. It has Append's contract.
	AppendLast(ctx context.Context, m provider.Message) error
}

// Starter is a Journal that starts the turn itself (marks its session running, stores the prompt). Run calls
// Begin once, beside the first provider request instead of before it, and waits for it before the turn shows
// anything: before the first event, the first stored message, the memory auto-save, a tool, and before it
// returns. prompt is the turn's prompt, or "" when the turn was cancelled before it began (the turn's own
// Append then reports the cancel and stores nothing). promptStored reports that Begin stored the prompt as the
// turn's user message (Run then does not Append it). When Begin fails the turn did not start: Run stops the
// request, emits, stores and saves nothing, and returns a *StartError.
type Starter interface {
	Begin(ctx context.Context, prompt string) (promptStored bool, err error)
}

// Events is what the client that sent the prompt sees of the turn.
type Events interface {
	// Update receives every event of the turn in production order, from Run's goroutine; it must not block for
	// long. The caller fills in the session id and sends turn_complete itself.
	Update(ev api.SessionUpdate)
	// Elicit asks the client a question (ask_user) and returns its answer. It returns an error wrapping
	// ErrNoElicitation when the client cannot answer questions, and must honour ctx.
	Elicit(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error)
}

// Meter is what a turn costs and the budgets it runs under.
type Meter interface {
	// Check runs before every provider request: an error fails the turn with it (the request is not made); a
	// warning is shown once per turn as a notice event.
	Check() (warning string, err error)
	// Record is called once per provider request that reported usage; a failure is logged, not fatal.
	Record(ctx context.Context, u provider.Usage) error
}

// nopJournal stores nothing: a turn without a Journal.
type nopJournal struct{}

func (nopJournal) Append(context.Context, provider.Message) error             { return nil }
func (nopJournal) AppendResult(context.Context, provider.Message, bool) error { return nil }
func (nopJournal) AppendLast(context.Context, provider.Message) error         { return nil }

// nopEvents shows nothing and answers no question: a turn without Events.
type nopEvents struct{}

func (nopEvents) Update(api.SessionUpdate) {}
func (nopEvents) Elicit(context.Context, api.ElicitationParams) (api.ElicitationResult, error) {
	return api.ElicitationResult{}, ErrNoElicitation
}
