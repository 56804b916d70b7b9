package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// guard bounds how long a test waits for the other side of an overlap; reaching it means the two steps ran one
// after the other, which the test then reports (it is a deadlock guard, not a timing assertion).
const guard = 3 * time.Second

// gatedMemory is a MemoryHook that records what it was asked and can hold Save until a gate opens.
type gatedMemory struct {
	block    string
	recalled chan struct{} // closed when Context is called
	saveGate chan struct{} // Save waits for it (nil: no wait)

	mu           sync.Mutex
	saved        []string
	saveSawGate  bool
	contextCalls int
}

func newGatedMemory(block string, saveGate chan struct{}) *gatedMemory {
	return &gatedMemory{block: block, recalled: make(chan struct{}), saveGate: saveGate}
}

func (g *gatedMemory) Context(_ context.Context, _ string) string {
	g.mu.Lock()
	g.contextCalls++
	if g.contextCalls == 1 {
		close(g.recalled)
	}
	g.mu.Unlock()
	return g.block
}

func (g *gatedMemory) Save(_ context.Context, message string) {
	sawGate := false
	if g.saveGate != nil {
		select {
		case <-g.saveGate:
			sawGate = true
		case <-time.After(guard):
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.saved = append(g.saved, message)
	g.saveSawGate = sawGate
}

func (g *gatedMemory) savedMessages() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.saved...)
}

// signalProvider answers "ok" and closes started when its request is sent; it keeps the request's messages.
type signalProvider struct {
	started chan struct{}
	mu      sync.Mutex
	sent    []provider.Message
}

func (p *signalProvider) Alias() string { return "test.signal" }

func (p *signalProvider) Stream(_ context.Context, req provider.Request, emit func(provider.Event)) (provider.Result, error) {
	p.mu.Lock()
	p.sent = append([]provider.Message(nil), req.Messages...)
	p.mu.Unlock()
	close(p.started)
	emit(provider.Event{Type: provider.EventText, Text: "ok"})
	return provider.Result{Text: "ok"}, nil
}

// The memory auto-save is not on the way to the provider: the request goes out while Save still runs, and Run
// returns (so turn_complete follows) only once Save is done. Before the change, Save ran first and the request
// waited for it, so Save never saw the request start.
func TestMemorySaveOverlapsTheRequestAndEndsBeforeRunReturns(t *testing.T) {
	h := newHarness(t)
	p := &signalProvider{started: make(chan struct{})}
	mem := newGatedMemory("[Memory context]\n- likes tea\n", p.started)
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	outcome, _, err := tr.Run(t.Context(), "what do I like")
	if err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if got := mem.savedMessages(); len(got) != 1 || got[0] != "what do I like" {
		t.Fatalf("saved when Run returned = %q, want the prompt once", got)
	}
	if !mem.saveSawGate {
		t.Fatalf("Save ran before the provider request was sent: the auto-save is still on the way to the first chunk")
	}
	last := p.sent[len(p.sent)-1]
	if last.Content != "[Memory context]\n- likes tea\nwhat do I like" {
		t.Fatalf("request's user message = %q, want the recalled block before the prompt", last.Content)
	}
	if rows := h.rows(); len(rows) != 2 || rows[0].Content != "what do I like" {
		t.Fatalf("stored rows = %+v", rows)
	}
}

// The recall runs while the prompt is being stored (they touch different databases): the user message's append
// is still in progress when Context is called.
func TestMemoryRecallOverlapsTheUserMessageAppend(t *testing.T) {
	h := newHarness(t)
	mem := newGatedMemory("", nil)
	tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	store := journalOf(tr).append
	overlapped := false
	journalOf(tr).append = func(ctx context.Context, role, content string) error {
		if role == provider.RoleUser {
			select {
			case <-mem.recalled:
				overlapped = true
			case <-time.After(guard):
			}
		}
		return store(ctx, role, content)
	}
	if outcome, _, err := tr.Run(t.Context(), "hello"); err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if !overlapped {
		t.Fatalf("the recall waited for the user message's append")
	}
	if got := mem.savedMessages(); len(got) != 1 {
		t.Fatalf("saved = %q", got)
	}
}

// A prompt that could not be stored is not auto-saved to memory, and no request is sent.
func TestMemoryNotSavedWhenThePromptWasNotStored(t *testing.T) {
	h := newHarness(t)
	p := &signalProvider{started: make(chan struct{})}
	mem := newGatedMemory("", nil)
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	journalOf(tr).append = func(context.Context, string, string) error { return errors.New("disk full") }
	outcome, _, err := tr.Run(t.Context(), "hello")
	if outcome != api.OutcomeFailed || err == nil || !strings.Contains(err.Error(), "store user message") {
		t.Fatalf("Run = %q, %v; want failed storing the user message", outcome, err)
	}
	if got := mem.savedMessages(); len(got) != 0 {
		t.Fatalf("saved = %q, want nothing", got)
	}
	select {
	case <-p.started:
		t.Fatalf("the request was sent although the prompt was not stored")
	default:
	}
}

// A prompt the caller stored (PromptStored) is not appended again, and is still auto-saved to memory.
func TestPromptStoredByTheCallerIsNotAppendedAgain(t *testing.T) {
	h := newHarness(t)
	if _, err := h.chat.Append(t.Context(), "s1", provider.RoleUser, "hello", time.Now()); err != nil {
		t.Fatal(err)
	}
	mem := newGatedMemory("", nil)
	tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory, tr.PromptStored = mem, true
	if outcome, _, err := tr.Run(t.Context(), "hello"); err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	rows := h.rows()
	if len(rows) != 2 || rows[0].Role != "user" || rows[1].Role != "assistant" {
		t.Fatalf("rows = %+v, want the caller's user row and the answer", rows)
	}
	if got := mem.savedMessages(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("saved = %q", got)
	}
}

// StartMemory runs the recall before Run is called (it overlaps what the caller still does); Run then uses it
// and auto-saves once. Abandon ends it without saving.
func TestStartMemoryRecallsAheadOfRunAndAbandonSavesNothing(t *testing.T) {
	h := newHarness(t)
	mem := newGatedMemory("[Memory context]\n- x\n", nil)
	tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	tr.StartMemory(t.Context(), "hello")
	select {
	case <-mem.recalled:
	case <-time.After(guard):
		t.Fatalf("StartMemory did not start the recall")
	}
	if outcome, _, err := tr.Run(t.Context(), "hello"); err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if got := mem.savedMessages(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("saved = %q", got)
	}
	mem.mu.Lock()
	calls := mem.contextCalls
	mem.mu.Unlock()
	if calls != 1 {
		t.Fatalf("Context called %d times, want once", calls)
	}

	abandoned := newGatedMemory("", nil)
	tr = h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = abandoned
	tr.StartMemory(t.Context(), "never run")
	tr.Abandon()
	if got := abandoned.savedMessages(); len(got) != 0 {
		t.Fatalf("an abandoned turn saved %q", got)
	}
}

// The answer of a turn without tools is stored beside the auto-save (they write different databases); Run still
// returns only once the auto-save is done. Before the change, the answer's append waited for the save.
func TestAnswerAppendOverlapsTheMemorySave(t *testing.T) {
	h := newHarness(t)
	answering := make(chan struct{})
	mem := newGatedMemory("", answering)
	tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	store := journalOf(tr).append
	journalOf(tr).appendLast = func(ctx context.Context, role, content string) error {
		close(answering)
		return store(ctx, role, content)
	}
	if outcome, _, err := tr.Run(t.Context(), "hello"); err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if got := mem.savedMessages(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("saved when Run returned = %q, want the prompt once", got)
	}
	if !mem.saveSawGate {
		t.Fatalf("the answer's append waited for the auto-save")
	}
	if rows := h.rows(); len(rows) != 2 || rows[1].Role != "assistant" {
		t.Fatalf("stored rows = %+v", rows)
	}
}
