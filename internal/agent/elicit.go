package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// elicitAsker implements tools.Asker (and tools.MultiAsker) over Events.Elicit.
type elicitAsker struct {
	sessionID string
	timeout   time.Duration
	elicit    func(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error)
}

var _ tools.MultiAsker = elicitAsker{}

// Property names of the forms, as upstream's zeroclaw-api/src/elicitation.rs names them: "choice" (single-select)
// and "choices" (multi-select); "answer" is our free-text form, which has no upstream equivalent.
const (
	propChoice  = "choice"
	propChoices = "choices"
	propAnswer  = "answer"
)

// choiceConst is the wire value of the i-th choice ("choice-<i>"): index-based, so duplicate or empty display
// texts still round-trip.
func choiceConst(i int) string { return "choice-" + strconv.Itoa(i) }

// choiceOptions are the oneOf / anyOf entries {const, title} of the choices, each shown escaped.
func choiceOptions(choices []string) []any {
	out := make([]any, len(choices))
	for i, c := range choices {
		out[i] = map[string]any{"const": choiceConst(i), "title": visible.Escape(c)}
	}
	return out
}

// singleSelectSchema is upstream's single_select_schema: one required string property "choice" whose oneOf
// lists the choices. zerocode renders exactly this shape as a picker.
func singleSelectSchema(choices []string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{propChoice: map[string]any{
			"type": "string", "title": "Choice", "oneOf": choiceOptions(choices)}},
		"required": []string{propChoice},
	}
}

// multiSelectSchema is upstream's multi_select_schema: one required array property "choices" whose items'
// anyOf lists the choices; at least one, at most all may be picked.
func multiSelectSchema(choices []string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{propChoices: map[string]any{
			"type": "array", "title": "Choices", "minItems": 1, "maxItems": len(choices),
			"items": map[string]any{"anyOf": choiceOptions(choices)}}},
		"required": []string{propChoices},
	}
}

// textSchema is the free-text form of a question without choices: one required string field "answer".
func textSchema(shown string) map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{propAnswer: map[string]any{"type": "string", "description": shown}},
		"required":   []string{propAnswer},
	}
}

// decodeChoice maps one accepted value back to the choice offered: upstream's "choice-<i>", or, as our own
// clients sent before they read upstream's form, the escaped text of a choice. Any other string is a free
// answer; ok is false for a "choice-<i>" out of range.
func decodeChoice(v any, choices []string) (string, bool) {
	s, isString := v.(string)
	if !isString {
		if v == nil {
			return "", true
		}
		return fmt.Sprint(v), true
	}
	if n, found := strings.CutPrefix(s, "choice-"); found {
		if i, err := strconv.Atoi(n); err == nil && strconv.Itoa(i) == n {
			if i < 0 || i >= len(choices) {
				return "", false
			}
			return choices[i], true
		}
	}
	for _, c := range choices {
		if visible.Escape(c) == s {
			return c, true
		}
	}
	return s, true
}

// Ask puts the question as upstream's single-select form when choices are given, else as a free-text form.
// The question and choices come from the model: they are shown escaped (a multi-line question keeps its line
// breaks, each line escaped). An accepted {choice: "choice-<i>"} is the i-th choice; {answer: ...} (our older
// form) is still read.
func (a elicitAsker) Ask(ctx context.Context, question string, choices []string) (string, error) {
	shown := strings.Join(visible.Lines(question), "\n")
	schema := textSchema(shown)
	if len(choices) > 0 {
		schema = singleSelectSchema(choices)
	}
	content, err := a.ask(ctx, shown, schema)
	if err != nil {
		return "", err
	}
	v, ok := content[propChoice]
	if !ok {
		v = content[propAnswer]
	}
	answer, ok := decodeChoice(v, choices)
	if !ok {
		return "", fmt.Errorf("agent: ask: the client answered an unknown choice %v", v)
	}
	return answer, nil
}

// AskMany puts the question as upstream's multi-select form and returns the choices picked, in the order
// given; {answer: ...} (a client that answers one) is read as a one-element answer.
func (a elicitAsker) AskMany(ctx context.Context, question string, choices []string) ([]string, error) {
	shown := strings.Join(visible.Lines(question), "\n")
	content, err := a.ask(ctx, shown, multiSelectSchema(choices))
	if err != nil {
		return nil, err
	}
	raw, ok := content[propChoices]
	if !ok {
		raw = []any{content[propAnswer]}
	}
	list, isList := raw.([]any)
	if !isList {
		return nil, fmt.Errorf("agent: ask: the client answered %T, not a list of choices", raw)
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		c, ok := decodeChoice(v, choices)
		if !ok {
			return nil, fmt.Errorf("agent: ask: the client answered an unknown choice %v", v)
		}
		out = append(out, c)
	}
	return out, nil
}

// ask sends one form and returns the accepted content, or the outcome's error.
func (a elicitAsker) ask(ctx context.Context, shown string, schema map[string]any) (map[string]any, error) {
	p := api.ElicitationParams{SessionID: a.sessionID, Mode: "form", Message: shown, RequestedSchema: schema}
	ctx, cancel := context.WithTimeoutCause(ctx, a.timeout, tools.ErrTimeout)
	defer cancel()
	res, err := a.elicit(ctx, p)
	switch {
	case errors.Is(err, ErrNoElicitation):
		return nil, fmt.Errorf("agent: ask: %w", tools.ErrNoElicitation)
	case err != nil && errors.Is(context.Cause(ctx), tools.ErrTimeout):
		return nil, fmt.Errorf("agent: ask: %w", tools.ErrTimeout)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("agent: ask: %w", tools.ErrCancelled)
	case err != nil:
		return nil, fmt.Errorf("agent: ask: %w", err)
	}
	switch res.Action {
	case "accept":
		if res.Content == nil {
			return map[string]any{}, nil
		}
		return res.Content, nil
	case "decline":
		return nil, fmt.Errorf("agent: ask: %w", tools.ErrDeclined)
	default: // "cancel" and anything unknown
		return nil, fmt.Errorf("agent: ask: %w", tools.ErrCancelled)
	}
}
