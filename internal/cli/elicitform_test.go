package cli

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// upstreamSingle and upstreamMulti are the forms upstream's zeroclaw-api/src/elicitation.rs builds.
func upstreamSingle(titles ...string) map[string]any {
	var one []any
	for i, t := range titles {
		one = append(one, map[string]any{"const": "choice-" + string(rune('0'+i)), "title": t})
	}
	return map[string]any{"type": "object", "required": []any{"choice"},
		"properties": map[string]any{"choice": map[string]any{"type": "string", "title": "Choice", "oneOf": one}}}
}

func upstreamMulti(titles ...string) map[string]any {
	s := upstreamSingle(titles...)
	one := s["properties"].(map[string]any)["choice"].(map[string]any)["oneOf"]
	return map[string]any{"type": "object", "required": []any{"choices"},
		"properties": map[string]any{"choices": map[string]any{"type": "array", "minItems": 1, "maxItems": len(titles),
			"items": map[string]any{"anyOf": one}}}}
}

// chat reads upstream's single- and multi-select forms and answers with their consts; a line that picks no
// choice goes back as a free answer, and the older enum form still answers with the choice's text.
func TestElicitFormUpstreamShapes(t *testing.T) {
	for _, c := range []struct {
		schema map[string]any
		line   string
		want   map[string]any
	}{
		{upstreamSingle("Red", "Green", "Blue"), "2", map[string]any{"choice": "choice-1"}},
		{upstreamSingle("Red", "Green", "Blue"), "Blue", map[string]any{"choice": "choice-2"}},
		{upstreamSingle("Red", "Green"), "neither", map[string]any{"answer": "neither"}},
		{upstreamMulti("Red", "Green", "Blue"), "1, 3", map[string]any{"choices": []any{"choice-0", "choice-2"}}},
		{upstreamMulti("Red", "Green"), "", map[string]any{"answer": ""}},
		{map[string]any{"properties": map[string]any{"answer": map[string]any{"enum": []any{"x", "y"}}}}, "2", map[string]any{"answer": "y"}},
		{map[string]any{"properties": map[string]any{"answer": map[string]any{"type": "string"}}}, " free ", map[string]any{"answer": "free"}},
	} {
		f := parseElicitForm(c.schema)
		if got := f.content(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v answering %q: %v, want %v", f, c.line, got, c.want)
		}
	}
	if f := parseElicitForm(upstreamMulti("a", "b")); !f.multi || !reflect.DeepEqual(f.titles, []string{"a", "b"}) {
		t.Errorf("multi form %+v", f)
	}
}

// Over the wire: chat shows upstream's choices by title and answers {choice: "choice-<i>"}.
func TestAgentElicitationUpstreamForm(t *testing.T) {
	f := newFakeDaemon(t)
	answers := make(chan api.ElicitationResult, 1)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		raw, err := c.Call(ctx, api.MethodElicitationCreate, api.ElicitationParams{SessionID: "s1", Mode: "form",
			Message: "Pick", RequestedSchema: upstreamSingle("red", "blue")})
		if err != nil {
			return api.SessionPromptResult{}, err
		}
		var r api.ElicitationResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return api.SessionPromptResult{}, err
		}
		answers <- r
		return finish(c, api.OutcomeCompleted, "ok", "")
	}
	_, errOut, code := f.run(t.Context(), "2\n", "agent", "-m", "go")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := "  1) red\n  2) blue\nAnswer: "; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not show %q:\n%q", want, errOut)
	}
	if r := <-answers; r.Action != "accept" || r.Content["choice"] != "choice-1" {
		t.Fatalf("answer %+v, want choice-1", r)
	}
}
