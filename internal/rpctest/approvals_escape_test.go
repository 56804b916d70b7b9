package rpctest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// showable fails unless s holds only characters a terminal shows as themselves (newlines separate the lines
// of a multi-line command).
func showable(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029') {
			t.Fatalf("%s holds %U: %q", what, r, s)
		}
	}
}

// approval_request.arguments_summary shows a spoofing command escaped, every line of a multi-line command on
// its own line, and elicitation/create shows the question and choices escaped.
func TestApprovalRequestIsEscaped(t *testing.T) {
	t.Parallel()
	d := startApprovals(t)
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})

	spoof := "echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] {\"command\":\"ls -la\"}...\u202e"
	var req api.SessionUpdate
	c.promptAnswering(s.SessionID, shellHook(spoof), func(u api.SessionUpdate) *api.SessionApproveParams {
		req = u
		return &api.SessionApproveParams{Decision: api.DecisionReject}
	})
	showable(t, "arguments_summary", req.ArgumentsSummary)
	showable(t, "tool_name", req.ToolName)
	want := `shell: echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] {"command":"ls -la"}...\u202e`
	if req.ArgumentsSummary != want {
		t.Fatalf("arguments_summary = %q, want %q", req.ArgumentsSummary, want)
	}

	multi := "echo first\r\ntouch hidden\x1b[1A\x1b[2K\necho last"
	c.promptAnswering(s.SessionID, shellHook(multi), func(u api.SessionUpdate) *api.SessionApproveParams {
		req = u
		return &api.SessionApproveParams{Decision: api.DecisionReject}
	})
	showable(t, "arguments_summary", req.ArgumentsSummary)
	if want := "shell: 3 lines\n  1| echo first\\r\n  2| touch hidden\\x1b[1A\\x1b[2K\n  3| echo last"; req.ArgumentsSummary != want {
		t.Fatalf("arguments_summary = %q, want %q", req.ArgumentsSummary, want)
	}
}

func TestElicitationIsEscaped(t *testing.T) {
	t.Parallel()
	d := startApprovals(t)
	c := dialRC(t, d, `{"elicitation":{"form":{}}}`)
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	args, _ := json.Marshal(map[string]any{"question": "Proceed?\x1b[8m\nsecond line\u202e", "choices": []string{"yes\r", "no"}})
	var got api.ElicitationParams
	tr := c.prompt(s.SessionID, "/tool ask_user "+string(args), hooks{onRequest: func(f frame) {
		if err := json.Unmarshal(f.Params, &got); err != nil {
			t.Fatal(err)
		}
		schema, _ := json.Marshal(got.RequestedSchema)
		showable(t, "elicitation message", got.Message)
		if got.Message != "Proceed?\\x1b[8m\nsecond line\\u202e" || !strings.Contains(string(schema), `{"const":"choice-0","title":"yes\\r"}`) {
			t.Fatalf("elicitation/create params: message %q, schema %s", got.Message, schema)
		}
		// The user picks the escaped choice; the model is told the choice it offered.
		c.Send(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":{"action":"accept","content":{"answer":"yes\\r"}}}`)
	}})
	if tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	if r := toolResult(t, tr); r.IsError || output(t, r) != "yes\r" {
		t.Fatalf("tool_result = %q (error %v)", output(t, r), r.IsError)
	}
}

// An indirect command is asked about even after allow_always for shell in the session: the blocklist cannot
// vouch for it.
func TestIndirectCommandAskedAfterAllowAlways(t *testing.T) {
	t.Parallel()
	d := startApprovals(t)
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	tr := c.promptAnswering(s.SessionID, shellHook("touch plain.txt"), decision(api.DecisionAllowAlways))
	wantShape(t, tr.events, asked...)
	tr = c.promptAnswering(s.SessionID, shellHook("x=touch; $x indirect.txt"), decision(api.DecisionReject))
	wantShape(t, tr.events, asked...)
	if exists(t, filepath.Join(s.WorkspaceDir, "indirect.txt")) {
		t.Fatal("an indirect command ran without being asked after allow_always")
	}
	// Plain commands still use the session's grant.
	tr = c.promptAnswering(s.SessionID, shellHook("touch plain2.txt"), func(u api.SessionUpdate) *api.SessionApproveParams {
		t.Fatalf("asked again for a plain command after allow_always: %+v", u)
		return nil
	})
	if !exists(t, filepath.Join(s.WorkspaceDir, "plain2.txt")) {
		t.Fatal("plain2.txt was not written")
	}
}
