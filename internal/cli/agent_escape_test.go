package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// noControls fails when s holds a character a terminal would act on (other than newline) or an invisible one.
func noControls(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Fatalf("%s holds %U:\n%q", what, r, s)
		}
	}
}

// A daemon that sends raw control characters (an older daemon, or a hostile one) cannot paint over the
// approval prompt: the CLI escapes again and shows each line of a multi-line summary on its own line.
func TestAgentApprovalPromptEscapesHostileSummary(t *testing.T) {
	f := newFakeDaemon(t)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateAgentThoughtChunk, Text: "plan\x1b[8m"})
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateToolCall,
			ToolCallID: "t1", Name: "shell\x1b[2K", RawInput: json.RawMessage("{\"command\":\"\u202els\"}")})
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateApprovalRequest,
			RequestID: "r1", ToolName: "shell\x1b[2K", ArgumentsSummary: "shell: echo PWNED > m #\r\x1b[6A\x1b[Jls -la\nsecond line\u202e\r", TimeoutSecs: 120})
		select {
		case <-f.approved:
		case <-ctx.Done():
			return api.SessionPromptResult{}, ctx.Err()
		}
		out := "done\x1b[2J"
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateToolResult,
			ToolCallID: "t1", Name: "shell", RawOutput: &out})
		return finish(c, api.OutcomeFailed, "", "provider said \x1b]0;title\x07")
	}
	_, errOut, code := f.run(t.Context(), "n\n", "agent", "-m", "go")
	if code != 1 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	noControls(t, "stderr", errOut)
	for _, want := range []string{
		`shell\x1b[2K wants to run: shell: echo PWNED > m #\r\x1b[6A\x1b[Jls -la` + "\n  second line\\u202e\\r\nAllow?",
		`plan\x1b[8m`, `\u202els`, `done\x1b[2J`, `provider said \x1b]0;title\x07`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not show %q:\n%s", want, errOut)
		}
	}
}

// The elicitation prompt escapes the question (each line shown) and the choices; a choice number still
// answers with the choice as the daemon sent it.
func TestAgentElicitationEscapes(t *testing.T) {
	f := newFakeDaemon(t)
	answers := make(chan api.ElicitationResult, 1)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		raw, err := c.Call(ctx, api.MethodElicitationCreate, api.ElicitationParams{SessionID: "s1", Mode: "form",
			Message: "Pick\x1b[8m\nthen go\u202e", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"answer": map[string]any{"type": "string", "enum": []string{"red\r", "blue"}}}}})
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
	_, errOut, code := f.run(t.Context(), "1\n", "agent", "-m", "go")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	noControls(t, "stderr", errOut)
	if want := "\nPick\\x1b[8m\nthen go\\u202e\n  1) red\\r\n  2) blue\nAnswer: "; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not show %q:\n%q", want, errOut)
	}
	if r := <-answers; r.Action != "accept" || r.Content["answer"] != "red\r" {
		t.Fatalf("answer %+v, want the first choice as sent", r)
	}
}
