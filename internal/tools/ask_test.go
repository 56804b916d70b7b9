package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fakeAsker is the edge to the interactive client.
type fakeAsker struct {
	answer   string
	err      error
	question string
	choices  []string
}

func (f *fakeAsker) Ask(_ context.Context, question string, choices []string) (string, error) {
	f.question, f.choices = question, choices
	return f.answer, f.err
}

func TestAskUserOutcomes(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ask := call("ask_user", map[string]any{"question": "Deploy now?", "choices": []string{"yes", "no"}})

	f := &fakeAsker{answer: "yes"}
	r := Execute(t.Context(), Env{Workspace: s.ws, Asker: f}, ask)
	if r.IsError || r.Output != "yes" || f.question != "Deploy now?" || !slices.Equal(f.choices, []string{"yes", "no"}) {
		t.Fatalf("answered: %+v, asker saw %q %v", r, f.question, f.choices)
	}

	outcomes := map[string]error{
		"declined":  fmt.Errorf("client said no: %w", ErrDeclined),
		"cancelled": ErrCancelled,
		"timeout":   fmt.Errorf("after 120s: %w", ErrTimeout),
		"noclient":  ErrNoElicitation,
		"other":     errors.New("connection reset"),
	}
	seen := map[string]string{}
	for name, err := range outcomes {
		r := Execute(t.Context(), Env{Workspace: s.ws, Asker: &fakeAsker{err: err}}, ask)
		if !r.IsError || r.Output == "" {
			t.Fatalf("%s: %+v", name, r)
		}
		for other, text := range seen {
			if text == r.Output {
				t.Fatalf("%s and %s give the same result %q", name, other, text)
			}
		}
		seen[name] = r.Output
	}
	want := map[string]string{"declined": askDeclinedText, "cancelled": askCancelledText, "timeout": askTimeoutText, "noclient": askNoClientText}
	for name, text := range want {
		if seen[name] != text {
			t.Errorf("%s: %q, want %q", name, seen[name], text)
		}
	}
	if r := Execute(t.Context(), Env{Workspace: s.ws}, ask); !r.IsError || r.Output != askNoClientText {
		t.Fatalf("nil Asker: %+v", r)
	}
	if r := Execute(t.Context(), Env{Workspace: s.ws, Asker: &fakeAsker{}}, call("ask_user", map[string]any{"choices": []string{"a"}})); !r.IsError {
		t.Fatalf("missing question: %+v", r)
	}
	// Excluded ask_user is refused before the Asker is reached.
	f = &fakeAsker{answer: "x"}
	if r := Execute(t.Context(), Env{Workspace: s.ws, Asker: f, Policy: Policy{ExcludedTools: []string{"ask_user"}}}, ask); !r.IsError || f.question != "" {
		t.Fatalf("excluded ask_user: %+v", r)
	}
}
