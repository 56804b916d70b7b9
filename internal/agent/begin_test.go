package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// The caller's start of the turn (Begin: the session marked running and the prompt stored) is not on the way to
// the provider: the request is sent while Begin still runs. Nothing of the turn shows before Begin is done: no
// event, no stored message, no auto-save. Before the change, Begin ran first and the request waited for it.
func TestBeginOverlapsTheRequestAndGatesTheTurnsEvents(t *testing.T) {
	h := newHarness(t)
	p := &signalProvider{started: make(chan struct{})}
	mem := newGatedMemory("", nil)
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	overlapped, begun := false, make(chan struct{})
	beginWith(tr, func(ctx context.Context) (bool, error) {
		select {
		case <-p.started:
			overlapped = true
		case <-time.After(guard):
		}
		if got := h.types(); len(got) != 0 {
			t.Errorf("events before Begin ended: %q", got)
		}
		if got := mem.savedMessages(); len(got) != 0 {
			t.Errorf("auto-saved before Begin ended: %q", got)
		}
		_, err := h.chat.Append(ctx, "s1", provider.RoleUser, "hello", time.Now())
		close(begun)
		return true, err
	})
	outcome, content, err := tr.Run(t.Context(), "hello")
	if err != nil || outcome != api.OutcomeCompleted || content != "ok" {
		t.Fatalf("Run = %q, %q, %v", outcome, content, err)
	}
	if !overlapped {
		t.Fatalf("the provider request waited for Begin")
	}
	if rows := h.rows(); len(rows) != 2 || rows[0].Role != "user" || rows[1].Content != "ok" {
		t.Fatalf("stored rows = %+v, want Begin's prompt once, then the answer", rows)
	}
	if got := mem.savedMessages(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("saved = %q, want the prompt once", got)
	}
	if got := h.find(api.UpdateAgentMessageChunk); len(got) != 1 {
		t.Fatalf("chunks = %+v", got)
	}
}

// A Begin that reports the prompt was not stored (the turn was cancelled before it began) leaves the user
// message to Run's Append, before any event.
func TestBeginThatStoredNoPromptLeavesItToAppend(t *testing.T) {
	h := newHarness(t)
	tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	beginWith(tr, func(context.Context) (bool, error) { return false, nil })
	if outcome, _, err := tr.Run(t.Context(), "hello"); err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if rows := h.rows(); len(rows) != 2 || rows[0].Role != "user" || rows[0].Content != "hello" || rows[1].Role != "assistant" {
		t.Fatalf("stored rows = %+v", rows)
	}
}

// A Begin that fails means the turn did not start: Run stops the request and returns a *StartError with
// Begin's error, having emitted nothing, stored nothing and auto-saved nothing.
func TestFailedBeginEndsTheTurnUnstarted(t *testing.T) {
	h := newHarness(t)
	p := &signalProvider{started: make(chan struct{})}
	mem := newGatedMemory("", nil)
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Memory = mem
	disk := errors.New("disk full")
	beginWith(tr, func(context.Context) (bool, error) {
		<-p.started
		return false, disk
	})
	_, _, err := tr.Run(t.Context(), "hello")
	var se *StartError
	if !errors.As(err, &se) || !errors.Is(err, disk) {
		t.Fatalf("Run error = %v, want a *StartError wrapping Begin's", err)
	}
	if got := h.types(); len(got) != 0 {
		t.Fatalf("events of a turn that did not start: %q", got)
	}
	if rows := h.rows(); len(rows) != 0 {
		t.Fatalf("stored rows = %+v, want none", rows)
	}
	if got := mem.savedMessages(); len(got) != 0 {
		t.Fatalf("saved = %q, want nothing", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.usage) != 0 {
		t.Fatalf("usage recorded for a turn that did not start: %+v", h.usage)
	}
}
