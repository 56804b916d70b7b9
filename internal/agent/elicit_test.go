package agent

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// answering is an elicitAsker whose client accepts with content.
func answering(content map[string]any) elicitAsker {
	return elicitAsker{sessionID: "s", timeout: time.Minute,
		elicit: func(context.Context, api.ElicitationParams) (api.ElicitationResult, error) {
			return api.ElicitationResult{Action: "accept", Content: content}, nil
		}}
}

// Upstream's {choice: "choice-<i>"} and {choices: [...]} decode to the choices offered (duplicates kept apart by
// index); our older {answer} replies still decode; an out-of-range const is an error, not a silent answer.
func TestElicitAskerDecodes(t *testing.T) {
	ctx := t.Context()
	choices := []string{"a\r", "b", "b"}
	for _, c := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"choice": "choice-2"}, "b"},
		{map[string]any{"answer": `a\r`}, "a\r"},
		{map[string]any{"answer": "something else"}, "something else"},
		{map[string]any{"answer": 3.0}, "3"},
		{map[string]any{}, ""},
	} {
		if got, err := answering(c.content).Ask(ctx, "q", choices); err != nil || got != c.want {
			t.Errorf("%v: %q, %v; want %q", c.content, got, err, c.want)
		}
	}
	if _, err := answering(map[string]any{"choice": "choice-3"}).Ask(ctx, "q", choices); err == nil {
		t.Error("choice-3 of three choices decoded")
	}
	got, err := answering(map[string]any{"choices": []any{"choice-0", "choice-2"}}).AskMany(ctx, "q", choices)
	if err != nil || !slices.Equal(got, []string{"a\r", "b"}) {
		t.Errorf("multi: %q, %v", got, err)
	}
	if got, err := answering(map[string]any{"answer": "b"}).AskMany(ctx, "q", choices); err != nil || !slices.Equal(got, []string{"b"}) {
		t.Errorf("multi from an {answer} reply: %q, %v", got, err)
	}
	declined := elicitAsker{timeout: time.Minute, elicit: func(context.Context, api.ElicitationParams) (api.ElicitationResult, error) {
		return api.ElicitationResult{Action: "decline"}, nil
	}}
	if _, err := declined.AskMany(ctx, "q", choices); !errors.Is(err, tools.ErrDeclined) {
		t.Errorf("decline: %v", err)
	}
}

// A question without choices is the free-text {answer} form; with choices, upstream's single-select form.
func TestElicitAskerSchemas(t *testing.T) {
	var got []api.ElicitationParams
	a := elicitAsker{timeout: time.Minute, elicit: func(_ context.Context, p api.ElicitationParams) (api.ElicitationResult, error) {
		got = append(got, p)
		return api.ElicitationResult{Action: "accept"}, nil
	}}
	_, _ = a.Ask(t.Context(), "free?", nil)
	_, _ = a.Ask(t.Context(), "pick?", []string{"x"})
	if _, ok := got[0].RequestedSchema["properties"].(map[string]any)["answer"]; !ok {
		t.Errorf("free-text schema %v", got[0].RequestedSchema)
	}
	choice, _ := got[1].RequestedSchema["properties"].(map[string]any)["choice"].(map[string]any)
	if opts, _ := choice["oneOf"].([]any); len(opts) != 1 || choice["type"] != "string" {
		t.Errorf("single-select schema %v", got[1].RequestedSchema)
	}
}
