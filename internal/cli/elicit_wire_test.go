package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// upstreamSingle is the single-choice form upstream's zeroclaw-api/src/elicitation.rs builds.
func upstreamSingle(titles ...string) map[string]any {
	var one []any
	for i, t := range titles {
		one = append(one, map[string]any{"const": "choice-" + string(rune('0'+i)), "title": t})
	}
	return map[string]any{"type": "object", "required": []any{"choice"},
		"properties": map[string]any{"choice": map[string]any{"type": "string", "title": "Choice", "oneOf": one}}}
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
