// Package agent runs one turn of a conversation: it streams the model, turns tool calls into policy decisions,
// approvals and executions, reports everything as session/update events (Events) and appends every message to
// the turn's Journal. The seams a turn plugs into are described in seams.go.
package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// Limits bound what one turn takes from the model ([limits] in config); a zero field takes its default
// (config.DefaultMax*).
type Limits struct {
	MaxAnswerBytes   int // answer and reasoning text of the whole turn, JSON-encoded bytes
	MaxToolArgsBytes int // arguments of one tool call
	MaxToolCalls     int // tool calls of one model response
	MaxToolRounds    int // model responses of the turn that end in tool calls
}

// LimitsFrom maps the [limits] section onto Limits.
func LimitsFrom(c config.LimitsConfig) Limits {
	return Limits{MaxAnswerBytes: c.MaxAnswerBytes, MaxToolArgsBytes: c.MaxToolArgsBytes, MaxToolCalls: c.MaxToolCalls,
		MaxToolRounds: c.MaxToolRounds}
}

var (
	// ErrTooManySteps ends a turn whose model keeps calling tools past Limits.MaxToolRounds rounds.
	ErrTooManySteps = errors.New("agent: too many tool rounds")
	// ErrLimit ends a turn whose model output passed one of its Limits; the message names the config key.
	ErrLimit = errors.New("agent: turn limit reached")
)

// ProviderError is a turn that failed because the model provider's request failed (metrics count them).
type ProviderError struct{ Err error }

func (e *ProviderError) Error() string { return "agent: " + e.Err.Error() }
func (e *ProviderError) Unwrap() error { return e.Err }

// Tool result texts the model sees when a call does not run as asked; stable for clients and tests.
const (
	RejectedText        = "the user rejected this call"
	ApprovalTimeoutText = "denied: the approval request timed out without an answer"
	ApprovalGoneText    = "denied: the client that could approve this call disconnected"
	NoApproverText      = "denied: no client is available to approve this call"
	CancelledText       = "cancelled: the turn was cancelled before this call ran"
)

// Turn is one prompt-to-answer exchange. Fill it, call Run once, and discard it.
type Turn struct {
	Provider Provider
	Policy   tools.Policy
	// ToolEnv is the execution environment; Run sets its Policy to Policy and, when Asker is nil and Events is
	// set, its Asker to one that asks through Events.Elicit.
	ToolEnv tools.Env
	// History is the conversation before this turn (the journal's); System, when non-empty, leads it.
	History []provider.Message
	System  string

	// Journal stores the turn's messages; a Journal that is a Starter also starts the turn (see Starter). nil
	// stores nothing.
	Journal Journal
	// Events shows the turn to the client that sent the prompt; nil shows nothing, and ask_user then answers
	// that no client can answer.
	Events   Events
	Approver Approver
	// Meter records each provider request's usage and checks the budgets before each; nil does neither.
	Meter Meter

	// PromptStored tells Run that the caller already stored the prompt as the turn's user message; Run then
	// does not Append it. A Starter's Begin reports the same, and replaces it.
	PromptStored bool
	Limits       Limits
	// ContextWindow is the model's context window in tokens, reported in context_usage as max_context_tokens;
	// 0 leaves it out (unknown).
	ContextWindow int

	// Memory, when set, gives the turn its memory (see MemoryHook).
	Memory MemoryHook

	SessionID       string        // put in elicitation requests
	ApprovalTimeout time.Duration // for approvals and questions; 0 means DefaultApprovalTimeout
	NewID           func() string // approval request ids; nil means random hex
	Logger          *slog.Logger  // nil discards

	mem     *memoryWork             // started by StartMemory, else by Run
	journal Journal                 // Journal, or one that stores nothing
	events  Events                  // Events, or one that shows nothing
	emit    func(api.SessionUpdate) // events.Update, behind the start gate while Run runs
}

// Run executes the turn for prompt. It returns api.OutcomeCompleted with the final answer, api.OutcomeCancelled
// with the text streamed so far when ctx is cancelled, or api.OutcomeFailed with a non-nil error (the provider's
// or the store's; it never carries secrets). Messages already appended stay appended; after a cancel, the
// partial answer and "cancelled" results for unanswered tool calls are appended so history stays well formed.
func (t *Turn) Run(ctx context.Context, prompt string) (outcome, content string, err error) {
	t.defaults()
	mem := t.mem
	if mem == nil {
		mem = t.startMemory(ctx, prompt)
	}
	defer mem.wait()
	// The turn starts (Begin, or the prompt's Append) either before the request or beside it (g); every event
	// goes through g, so none is emitted before the start is known.
	g := &startGate{emit: t.events.Update}
	t.emit = g.send
	defer func() { t.emit = g.emit }()
	start := func(ctx context.Context, stored bool) (string, string, error) {
		if !stored {
			if err := t.journal.Append(ctx, provider.Message{Role: provider.RoleUser, Content: prompt}); err != nil {
				mem.release(false)
				if ctx.Err() != nil {
					return api.OutcomeCancelled, "", nil
				}
				return api.OutcomeFailed, "", fmt.Errorf("agent: store user message: %w", err)
			}
		}
		mem.release(true)
		return "", "", nil
	}
	streamCtx := ctx
	starter, _ := t.Journal.(Starter)
	if starter == nil {
		if outcome, content, err := start(ctx, t.PromptStored); outcome != "" {
			return outcome, content, err
		}
		g.opened = true
	} else {
		var stop context.CancelFunc
		streamCtx, stop = context.WithCancel(ctx)
		defer stop()
		begun := make(chan struct{})
		var stored bool
		var beginErr error
		begin := prompt
		if ctx.Err() != nil {
			begin = "" // cancelled already: leave the prompt to the turn, which stores nothing then
		}
		go func() {
			defer close(begun)
			stored, beginErr = starter.Begin(context.WithoutCancel(ctx), begin)
		}()
		g.open = func() bool {
			<-begun
			if beginErr != nil {
				mem.release(false)
				g.failed = &StartError{Err: beginErr}
			} else {
				g.outcome, g.content, g.err = start(ctx, stored)
			}
			if g.failed != nil || g.outcome != "" {
				stop()
				return false
			}
			return true
		}
		defer func() { // every return waits for the start; a turn that did not start returns why
			if !g.join() {
				outcome, content, err = g.ended()
			}
		}()
	}
	msgs := make([]provider.Message, 0, len(t.History)+2)
	if t.System != "" {
		msgs = append(msgs, provider.Message{Role: provider.RoleSystem, Content: t.System})
	}
	msgs = append(msgs, t.History...)
	msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: mem.recalled() + prompt})
	// The tools are read at every model request: MCP tools come and go with their servers (a late server, a
	// changed list, a tool_search activation) and the next request sees them.
	toolSpecs := func() []provider.ToolSpec {
		var specs []provider.ToolSpec
		for _, s := range t.Policy.Offered(tools.SpecsFor(t.ToolEnv)) {
			specs = append(specs, provider.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
		}
		return specs
	}
	durable := context.WithoutCancel(ctx) // writes that must land even when the turn was cancelled

	textUsed := 0   // encoded bytes of answer and reasoning text streamed so far in this turn
	warned := false // the budget warning was shown in this turn
	for step := 0; ; step++ {
		var streamed strings.Builder
		lim := provider.Limits{MaxTextBytes: t.Limits.MaxAnswerBytes - textUsed, MaxToolArgBytes: t.Limits.MaxToolArgsBytes,
			MaxToolCalls: t.Limits.MaxToolCalls}
		if lim.MaxTextBytes <= 0 {
			lim.MaxTextBytes = -1 // spent: no more text in this turn
		}
		if t.Meter != nil {
			warning, err := t.Meter.Check()
			if err != nil {
				return api.OutcomeFailed, "", err
			}
			if warning != "" && !warned {
				warned = true
				t.emit(api.SessionUpdate{Type: api.UpdateNotice, Level: "warn", Text: warning})
			}
		}
		res, err := t.Provider.Stream(streamCtx, provider.Request{Messages: msgs, Tools: toolSpecs(), Limits: lim}, func(ev provider.Event) {
			switch ev.Type {
			case provider.EventText:
				textUsed += provider.EncodedLen(ev.Text)
				streamed.WriteString(ev.Text)
				t.emit(api.SessionUpdate{Type: api.UpdateAgentMessageChunk, Text: ev.Text})
			case provider.EventThought:
				textUsed += provider.EncodedLen(ev.Text)
				t.emit(api.SessionUpdate{Type: api.UpdateAgentThoughtChunk, Text: ev.Text})
			}
		})
		if !g.join() { // the turn did not start, or its prompt could not be stored: the request was stopped
			return g.ended()
		}
		if err != nil || len(res.ToolCalls) > 0 {
			// The auto-save ran beside the request; no tool and no other append overtakes it. The answer of a
			// turn without tools is stored beside it (another database): Run waits for it before it returns.
			mem.wait()
		}
		t.recordUsage(durable, res.Usage, err == nil)
		if err != nil {
			partial := streamed.String()
			var le *provider.LimitError
			if errors.As(err, &le) && ctx.Err() == nil {
				// Only what fit was streamed and kept: store it so history shows where the answer was cut.
				if partial != "" {
					if aerr := t.journal.Append(durable, provider.Message{Role: provider.RoleAssistant, Content: partial}); aerr != nil {
						t.Logger.Warn("agent: store capped answer", "session", t.SessionID, "err", aerr)
					}
				}
				return api.OutcomeFailed, partial, t.limitError(le)
			}
			if ctx.Err() != nil {
				if partial != "" {
					if aerr := t.journal.Append(durable, provider.Message{Role: provider.RoleAssistant, Content: partial}); aerr != nil {
						t.Logger.Warn("agent: store partial answer", "session", t.SessionID, "err", aerr)
					}
				}
				return api.OutcomeCancelled, partial, nil
			}
			return api.OutcomeFailed, partial, &ProviderError{Err: err}
		}
		if len(res.ToolCalls) == 0 {
			if err := t.journal.AppendLast(durable, provider.Message{Role: provider.RoleAssistant, Content: res.Text}); err != nil {
				return api.OutcomeFailed, res.Text, fmt.Errorf("agent: store answer: %w", err)
			}
			if ctx.Err() != nil {
				return api.OutcomeCancelled, res.Text, nil
			}
			return api.OutcomeCompleted, res.Text, nil
		}
		if step >= t.Limits.MaxToolRounds {
			if err := t.journal.Append(durable, provider.Message{Role: provider.RoleAssistant, Content: res.Text}); err != nil {
				t.Logger.Warn("agent: store answer", "session", t.SessionID, "err", err)
			}
			return api.OutcomeFailed, res.Text, fmt.Errorf("%w: the model asked for tools in more than %d rounds (limits.max_tool_rounds)",
				ErrTooManySteps, t.Limits.MaxToolRounds)
		}
		called := provider.Message{Role: provider.RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls}
		if err := t.journal.Append(durable, called); err != nil {
			return api.OutcomeFailed, res.Text, fmt.Errorf("agent: store tool calls: %w", err)
		}
		msgs = append(msgs, called)
		for _, call := range res.ToolCalls {
			t.emit(api.SessionUpdate{Type: api.UpdateToolCall, ToolCallID: call.ID, Name: call.Name, RawInput: rawInput(call.Arguments)})
			var r tools.Result
			if ctx.Err() != nil {
				r = tools.Result{Output: CancelledText, IsError: true}
			} else {
				r = t.handleCall(ctx, call)
			}
			result := provider.Message{Role: provider.RoleTool, Content: r.Output, ToolCallID: call.ID, Name: call.Name}
			if err := t.journal.AppendResult(durable, result, r.IsError); err != nil {
				return api.OutcomeFailed, "", fmt.Errorf("agent: store tool result: %w", err)
			}
			out := r.Output
			t.emit(api.SessionUpdate{Type: api.UpdateToolResult, ToolCallID: call.ID, Name: call.Name, RawOutput: &out, IsError: r.IsError})
			msgs = append(msgs, result)
		}
		if ctx.Err() != nil {
			return api.OutcomeCancelled, "", nil
		}
	}
}

// StartError is a turn that did not start because its Starter's Begin failed: nothing of it was emitted or
// stored.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "agent: start turn: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// startGate holds a turn's events until its start is known. Only Run's goroutine uses it.
type startGate struct {
	emit   func(api.SessionUpdate) // the turn's Events.Update
	open   func() bool             // waits for the start; false when the turn must end (nil: nothing to wait for)
	opened bool                    // the start is known and the turn goes on
	closed bool                    // the start is known and the turn ends: nothing is emitted

	failed           *StartError // Begin failed
	outcome, content string      // the prompt's Append ended the turn (outcome != "")
	err              error
}

// join waits for the turn's start once and reports whether the turn goes on.
func (g *startGate) join() bool {
	if !g.opened && !g.closed {
		if g.open() {
			g.opened = true
		} else {
			g.closed = true
		}
	}
	return g.opened
}

// ended is what Run returns for a turn whose start ended it.
func (g *startGate) ended() (outcome, content string, err error) {
	if g.failed != nil {
		return api.OutcomeFailed, "", g.failed
	}
	return g.outcome, g.content, g.err
}

// send emits ev once the turn has started; a turn that did not start emits nothing.
func (g *startGate) send(ev api.SessionUpdate) {
	if g.join() {
		g.emit(ev)
	}
}

// MemoryHook is what a turn asks of the agent's memory. Context returns the block to put before the user's
// message in the request sent to the model ("" for none); Save is told the message once it is stored.
// Neither may fail the turn: they log their own errors.
type MemoryHook interface {
	Context(ctx context.Context, message string) string
	Save(ctx context.Context, message string)
}

// MemoryContextOpen starts an injected memory block; a message that already starts with it (a retry of a turn
// that was injected) is not injected again.
const MemoryContextOpen = "[Memory context]"

// memoryWork is a turn's memory work, run on a goroutine of its own beside the turn: the recall while the prompt
// is being stored, then the auto-save while the request goes to the provider. Neither sits on the way to the
// first chunk, and the order the hook sees is unchanged: Context, then Save once the prompt is stored (never when
// storing it failed). Run owns the goroutine and waits for it (wait) before it runs a tool or stores anything
// after the first provider request (the answer of a turn without tools is stored beside it), and before it
// returns. A nil *memoryWork (no memory) does nothing.
type memoryWork struct {
	block  chan string   // the recalled block ("" for none), sent once
	stored chan bool     // whether the prompt was stored, sent once by release
	done   chan struct{} // closed when the goroutine ends
}

// startMemory starts the memory work of a turn for prompt; nil when the turn has no memory.
func (t *Turn) startMemory(ctx context.Context, prompt string) *memoryWork {
	if t.Memory == nil {
		return nil
	}
	w := &memoryWork{block: make(chan string, 1), stored: make(chan bool, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		block := ""
		if !strings.HasPrefix(prompt, MemoryContextOpen) { // a retry of an injected turn is not injected again
			block = t.Memory.Context(ctx, prompt)
		}
		w.block <- block
		if <-w.stored {
			t.Memory.Save(context.WithoutCancel(ctx), prompt)
		}
	}()
	return w
}

// StartMemory starts the turn's memory work for prompt ahead of Run, so the recall overlaps what the caller
// still does before Run (storing the prompt, building the system prompt). Run must then be called with the same
// ctx and prompt, or Abandon when the turn will not run. Without it, Run starts the work itself.
func (t *Turn) StartMemory(ctx context.Context, prompt string) {
	if t.mem == nil {
		t.mem = t.startMemory(ctx, prompt)
	}
}

// Abandon ends the memory work StartMemory started, for a turn that will not run: nothing is saved.
func (t *Turn) Abandon() {
	if t.mem != nil {
		t.mem.release(false)
		t.mem.wait()
		t.mem = nil
	}
}

// release tells the memory work whether the prompt was stored; it is called once.
func (w *memoryWork) release(stored bool) {
	if w != nil {
		w.stored <- stored
	}
}

// recalled waits for the recall and returns the block to put before the prompt in the request.
func (w *memoryWork) recalled() string {
	if w == nil {
		return ""
	}
	return <-w.block
}

// wait returns once the memory work is over (the auto-save included); it may be called any number of times.
func (w *memoryWork) wait() {
	if w != nil {
		<-w.done
	}
}

func (t *Turn) defaults() {
	l := &t.Limits
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.MaxAnswerBytes, config.DefaultMaxAnswerBytes}, {&l.MaxToolArgsBytes, config.DefaultMaxToolArgsBytes},
		{&l.MaxToolCalls, config.DefaultMaxToolCalls}, {&l.MaxToolRounds, config.DefaultMaxToolRounds},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	if t.ApprovalTimeout <= 0 {
		t.ApprovalTimeout = DefaultApprovalTimeout
	}
	if t.NewID == nil {
		t.NewID = randomID
	}
	if t.Logger == nil {
		t.Logger = slog.New(slog.DiscardHandler)
	}
	t.journal, t.events = t.Journal, t.Events
	if t.journal == nil {
		t.journal = nopJournal{}
	}
	if t.events == nil {
		t.events = nopEvents{}
	}
	t.emit = t.events.Update
	t.ToolEnv.Policy = t.Policy
	if t.ToolEnv.Asker == nil && t.Events != nil {
		t.ToolEnv.Asker = elicitAsker{sessionID: t.SessionID, timeout: t.ApprovalTimeout, elicit: t.Events.Elicit}
	}
}

// limitError turns a provider's *LimitError into the turn's error: what passed which limit, that the stream
// was stopped, and the config key to raise.
func (t *Turn) limitError(le *provider.LimitError) error {
	var what, key string
	switch le.What {
	case provider.LimitText:
		what = fmt.Sprintf("more than %d bytes of answer and reasoning text in one turn", t.Limits.MaxAnswerBytes)
		key = "limits.max_answer_bytes"
	case provider.LimitToolArgs:
		what = fmt.Sprintf("tool-call arguments longer than %d bytes", t.Limits.MaxToolArgsBytes)
		key = "limits.max_tool_args_bytes"
	case provider.LimitToolCalls:
		what = fmt.Sprintf("more than %d tool calls in one response", t.Limits.MaxToolCalls)
		key = "limits.max_tool_calls"
	default:
		return fmt.Errorf("%w: %w", ErrLimit, le)
	}
	return fmt.Errorf("%w: the model (%s) sent %s; its stream was stopped. Raise %s to allow more",
		ErrLimit, t.Provider.Alias(), what, key)
}

// recordUsage reports one provider request's usage: a context_usage event and a cost record. A failed request
// is recorded only when the backend reported tokens.
func (t *Turn) recordUsage(ctx context.Context, u provider.Usage, ok bool) {
	if !ok && u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	in, out := u.InputTokens, u.OutputTokens
	ev := api.SessionUpdate{Type: api.UpdateContextUsage, InputTokens: &in, OutputTokens: &out}
	if window := t.ContextWindow; window > 0 {
		ev.MaxContextTokens = &window
	}
	t.emit(ev)
	if t.Meter == nil {
		return
	}
	if err := t.Meter.Record(ctx, u); err != nil {
		t.Logger.Warn("agent: record usage", "session", t.SessionID, "err", err)
	}
}

// handleCall applies the policy to one call and runs it, asking first when the policy says so.
func (t *Turn) handleCall(ctx context.Context, pc provider.ToolCall) tools.Result {
	call := tools.Call{ID: pc.ID, Name: pc.Name, Arguments: pc.Arguments}
	d := t.Policy.Decide(call, t.ToolEnv.Workspace)
	switch d.Verdict {
	case tools.Run:
		return tools.Execute(ctx, t.ToolEnv, call)
	case tools.Ask:
		return t.askAndRun(ctx, call, d.AskEveryTime, d.Risk)
	}
	return tools.Result{Output: "refused: " + d.Reason, IsError: true}
}

func (t *Turn) askAndRun(ctx context.Context, call tools.Call, everyTime bool, risk tools.Risk) tools.Result {
	if t.Approver == nil {
		return tools.Result{Output: NoApproverText, IsError: true}
	}
	req := ApprovalRequest{
		RequestID:    t.NewID(),
		ToolName:     call.Name,
		Summary:      t.Policy.Summary(call),
		Arguments:    call.Arguments,
		Timeout:      t.ApprovalTimeout,
		AskEveryTime: everyTime,
		Risk:         string(risk),
	}
	req.Announce = func(approver string) {
		// Only offered tools get here, so the name is one of ours; it is escaped all the same, like everything
		// a person reads to decide.
		t.emit(api.SessionUpdate{Type: api.UpdateApprovalRequest, RequestID: req.RequestID, ToolName: visible.Escape(req.ToolName),
			ArgumentsSummary: req.Summary, TimeoutSecs: int((req.Timeout + time.Second - 1) / time.Second),
			Risk: req.Risk, Approver: approver})
	}
	dec, err := t.Approver.RequestApproval(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Result{Output: CancelledText, IsError: true}
	case errors.Is(err, ErrApprovalTimeout):
		return tools.Result{Output: ApprovalTimeoutText, IsError: true}
	case err != nil:
		return tools.Result{Output: ApprovalGoneText, IsError: true}
	}
	switch dec.Decision {
	case api.DecisionAllowOnce, api.DecisionAllowAlways:
		return tools.Execute(ctx, t.ToolEnv, call)
	case api.DecisionRejectWithEdit:
		call.Arguments = dec.Replacement
		r := tools.Execute(ctx, t.ToolEnv, call)
		r.Output = fmt.Sprintf("the user edited the arguments before running the call: %s\n%s", compact(dec.Replacement), r.Output)
		return r
	}
	return tools.Result{Output: RejectedText, IsError: true}
}

// rawInput returns args as a JSON value for the tool_call event.
func rawInput(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return args
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "appr-" + hex.EncodeToString(b[:])
}
