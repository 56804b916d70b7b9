package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/journal"
)

// Agents of the approval tests, all on the echo provider: "a" supervised (workspace only), "ro" readonly,
// "short" supervised with a one-second approval timeout.
const approvalsExtra = echoTOML + `
[agents.ro]
model_provider = "echo.default"
risk_profile = "readonly"

[agents.short]
model_provider = "echo.default"
risk_profile = "quick"

[risk_profiles.quick]
level = "supervised"
workspace_only = true
approval_timeout_secs = 1
`

func startApprovals(t *testing.T, opts ...Option) *Daemon {
	return Start(t, append([]Option{WithConfig(agentConfig("", "echo.default", "supervised", approvalsExtra))}, opts...)...)
}

// shape renders the non-chunk events of a turn, without token counts: the protocol-level skeleton.
func shape(evs []api.SessionUpdate) []string {
	var out []string
	for _, k := range kinds(evs) {
		if strings.HasPrefix(k, api.UpdateAgentMessageChunk+":") {
			continue
		}
		if strings.HasPrefix(k, api.UpdateContextUsage+":") {
			k = api.UpdateContextUsage
		}
		out = append(out, k)
	}
	return out
}

func wantShape(t *testing.T, evs []api.SessionUpdate, want ...string) {
	t.Helper()
	if got := shape(evs); !slices.Equal(got, want) {
		t.Fatalf("event skeleton:\n got  %q\n want %q", got, want)
	}
}

// streamed is the concatenation of the turn's message chunks.
func streamed(evs []api.SessionUpdate) string {
	var b strings.Builder
	for _, e := range only(evs, api.UpdateAgentMessageChunk) {
		b.WriteString(e.Text)
	}
	return b.String()
}

// promptAnswering runs a prompt and answers each approval_request with decide's params (nil: leave it
// pending). It checks every session/approve acknowledgement.
func (c *rc) promptAnswering(sid, text string, decide func(u api.SessionUpdate) *api.SessionApproveParams) turn {
	c.t.Helper()
	acks := map[string]bool{}
	ack := func(f frame) bool {
		if !acks[idOf(f)] {
			return false
		}
		var r api.SessionApproveResult
		if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || !r.Acknowledged || r.SessionID != sid {
			c.t.Fatalf("session/approve answered %s", f.Raw)
		}
		delete(acks, idOf(f))
		return true
	}
	tr := c.prompt(sid, text, hooks{
		onUpdate: func(u api.SessionUpdate) {
			if u.Type != api.UpdateApprovalRequest {
				return
			}
			if p := decide(u); p != nil {
				p.SessionID, p.RequestID = sid, u.RequestID
				acks[c.send(api.MethodSessionApprove, p)] = true
			}
		},
		onOther: ack,
	})
	for len(acks) > 0 { // an acknowledgement may be queued after the prompt's response
		if f := c.recv(); !ack(f) {
			c.t.Fatalf("expected a session/approve response, got %s", f.Raw)
		}
	}
	if tr.err != nil {
		c.t.Fatalf("prompt %q: %s", text, tr.err)
	}
	return tr
}

func decision(d string) func(api.SessionUpdate) *api.SessionApproveParams {
	return func(api.SessionUpdate) *api.SessionApproveParams { return &api.SessionApproveParams{Decision: d} }
}

func shellHook(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return "/tool shell " + string(b)
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// toolResult returns the turn's only tool_result event.
func toolResult(t *testing.T, tr turn) api.SessionUpdate {
	t.Helper()
	rs := only(tr.events, api.UpdateToolResult)
	if len(rs) != 1 {
		t.Fatalf("%d tool_result events, want 1: %q", len(rs), kinds(tr.events))
	}
	return rs[0]
}

// The model is told the tool's outcome: echo answers "tool <name> returned: <output>", streamed and final.
func checkTold(t *testing.T, tr turn, tool, out string) {
	t.Helper()
	want := "tool " + tool + " returned: " + out
	if tr.result.Outcome != api.OutcomeCompleted || tr.result.Content != want || streamed(tr.events) != want {
		t.Fatalf("final answer %+v (streamed %q), want %q", tr.result, streamed(tr.events), want)
	}
}

var asked = []string{"context_usage", "tool_call:shell", "approval_request:shell", "tool_result:shell", "context_usage", "turn_complete:completed"}

func TestApprovalsOverSocket(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Unix(1_700_000_000, 0)) // only "timeout denies" moves it
	d := startApprovals(t, WithClock(clk))

	t.Run("allow_once runs", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		cmd := "touch allow_once.txt && echo ran-allow-once"
		var req api.SessionUpdate
		tr := c.promptAnswering(s.SessionID, shellHook(cmd), func(u api.SessionUpdate) *api.SessionApproveParams {
			req = u
			return &api.SessionApproveParams{Decision: api.DecisionAllowOnce}
		})
		wantShape(t, tr.events, asked...)
		if req.RequestID == "" || req.ArgumentsSummary != "shell: "+cmd || req.TimeoutSecs != 120 {
			t.Fatalf("approval_request = %+v", req)
		}
		r := toolResult(t, tr)
		if r.IsError || output(t, r) != "ran-allow-once\n[exit code: 0]" {
			t.Fatalf("tool_result = %q (error %v)", output(t, r), r.IsError)
		}
		checkTold(t, tr, "shell", output(t, r))
		if !exists(t, filepath.Join(s.WorkspaceDir, "allow_once.txt")) {
			t.Fatal("the approved command did not run in the workspace")
		}
	})

	t.Run("reject does not run and the model is told", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		tr := c.promptAnswering(s.SessionID, shellHook("touch rejected.txt"), decision(api.DecisionReject))
		wantShape(t, tr.events, asked...)
		if r := toolResult(t, tr); !r.IsError || output(t, r) != agent.RejectedText {
			t.Fatalf("tool_result = %q (error %v)", output(t, r), r.IsError)
		}
		checkTold(t, tr, "shell", agent.RejectedText)
		if exists(t, filepath.Join(s.WorkspaceDir, "rejected.txt")) {
			t.Fatal("a rejected command ran")
		}
	})

	t.Run("timeout denies", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "short"})
		var req api.SessionUpdate
		tr := c.promptAnswering(s.SessionID, shellHook("touch timed_out.txt"), func(u api.SessionUpdate) *api.SessionApproveParams {
			req = u
			if !clk.WaitTimer(time.Second, 20*time.Second) {
				t.Error("no one-second approval wait was armed")
			}
			clk.Advance(time.Second) // nobody answers: the wait ends
			return nil
		})
		wantShape(t, tr.events, asked...)
		if req.TimeoutSecs != 1 {
			t.Fatalf("approval_request timeout_secs = %d, want 1", req.TimeoutSecs)
		}
		if r := toolResult(t, tr); !r.IsError || output(t, r) != agent.ApprovalTimeoutText {
			t.Fatalf("tool_result = %q (error %v)", output(t, r), r.IsError)
		}
		checkTold(t, tr, "shell", agent.ApprovalTimeoutText)
		if exists(t, filepath.Join(s.WorkspaceDir, "timed_out.txt")) {
			t.Fatal("a timed-out approval ran the command")
		}
		// A late answer finds nothing pending: not acknowledged, not an error (protocol.md §6).
		var late api.SessionApproveResult
		c.mustCall(api.MethodSessionApprove, api.SessionApproveParams{SessionID: s.SessionID, RequestID: req.RequestID, Decision: api.DecisionAllowOnce}, &late)
		if late.Acknowledged || late.RequestID != req.RequestID {
			t.Fatalf("approving an expired request answered %+v", late)
		}
	})

	t.Run("disconnect while pending denies", func(t *testing.T) {
		gone := dialRC(t, d, "")
		s := gone.newSession(api.SessionNewParams{AgentAlias: "a"})
		gone.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: shellHook("touch after_disconnect.txt")})
		for {
			f := gone.recv()
			if f.Method == api.NotifySessionUpdate && contains(f.Raw, `"type":"approval_request"`) {
				break
			}
		}
		gone.Conn().Close()

		c := dialRC(t, d, "")
		waitFor(t, "the turn to end after the disconnect", func() bool { return c.state(s.SessionID) == "idle" })
		if exists(t, filepath.Join(s.WorkspaceDir, "after_disconnect.txt")) {
			t.Fatal("a command whose approver disconnected ran")
		}
		msgs := c.messages(s.SessionID).Messages
		if len(msgs) != 3 || msgs[2].Role != "tool" {
			t.Fatalf("history after the disconnect: %+v", msgs)
		}
		denied := []string{
			journal.EncodeToolResult("echo-call-1", "shell", agent.CancelledText, true),
			journal.EncodeToolResult("echo-call-1", "shell", agent.ApprovalGoneText, true),
		}
		if !slices.Contains(denied, msgs[2].Content) {
			t.Fatalf("stored tool result %q, want a denial", msgs[2].Content)
		}
		// The session survives its client: another one continues it.
		tr := c.prompt(s.SessionID, "still here", hooks{})
		if tr.err != nil || tr.result.Content != "still here" {
			t.Fatalf("prompt after the disconnect: %+v %s", tr.result, tr.err)
		}
	})

	t.Run("reject_with_edit runs the replacement", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		replacement := `{"command":"touch edited.txt && echo edited-ran"}`
		tr := c.promptAnswering(s.SessionID, shellHook("touch original.txt"), func(api.SessionUpdate) *api.SessionApproveParams {
			return &api.SessionApproveParams{Decision: api.DecisionRejectWithEdit, Replacement: json.RawMessage(replacement)}
		})
		wantShape(t, tr.events, asked...)
		r := toolResult(t, tr)
		out := output(t, r)
		head, rest, _ := strings.Cut(out, "\n")
		edited, ok := strings.CutPrefix(head, "the user edited the arguments before running the call: ")
		var args map[string]string
		if r.IsError || !ok || json.Unmarshal([]byte(edited), &args) != nil || args["command"] != "touch edited.txt && echo edited-ran" || rest != "edited-ran\n[exit code: 0]" {
			t.Fatalf("tool_result = %q (error %v)", out, r.IsError)
		}
		checkTold(t, tr, "shell", out)
		if !exists(t, filepath.Join(s.WorkspaceDir, "edited.txt")) || exists(t, filepath.Join(s.WorkspaceDir, "original.txt")) {
			t.Fatal("reject_with_edit must run the replacement and only it")
		}
	})

	t.Run("allow_always is not asked twice in the session", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		tr := c.promptAnswering(s.SessionID, shellHook("touch always1.txt"), decision(api.DecisionAllowAlways))
		wantShape(t, tr.events, asked...)
		tr = c.promptAnswering(s.SessionID, shellHook("touch always2.txt"), func(u api.SessionUpdate) *api.SessionApproveParams {
			t.Fatalf("asked again after allow_always: %+v", u)
			return nil
		})
		wantShape(t, tr.events, "context_usage", "tool_call:shell", "tool_result:shell", "context_usage", "turn_complete:completed")
		for _, f := range []string{"always1.txt", "always2.txt"} {
			if !exists(t, filepath.Join(s.WorkspaceDir, f)) {
				t.Fatalf("%s was not written", f)
			}
		}
		// The grant belongs to that session only.
		other := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		tr = c.promptAnswering(other.SessionID, shellHook("touch always3.txt"), decision(api.DecisionReject))
		wantShape(t, tr.events, asked...)
		if exists(t, filepath.Join(s.WorkspaceDir, "always3.txt")) {
			t.Fatal("allow_always leaked into another session")
		}
	})

	t.Run("readonly never runs shell", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "ro"})
		tr := c.promptAnswering(s.SessionID, shellHook("touch readonly.txt"), func(u api.SessionUpdate) *api.SessionApproveParams {
			t.Fatalf("readonly asked for approval: %+v", u)
			return nil
		})
		wantShape(t, tr.events, "context_usage", "tool_call:shell", "tool_result:shell", "context_usage", "turn_complete:completed")
		r := toolResult(t, tr)
		if out := output(t, r); !r.IsError || !strings.HasPrefix(out, "refused: ") || !contains(out, "readonly") {
			t.Fatalf("tool_result = %q (error %v)", out, r.IsError)
		}
		checkTold(t, tr, "shell", output(t, r))
		if exists(t, filepath.Join(s.WorkspaceDir, "readonly.txt")) {
			t.Fatal("readonly ran a shell command")
		}
	})

	t.Run("paths outside the workspace are refused", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		// Outside the install root too, which is refused for its own reason (sandbox_test.go).
		outside := filepath.Join(canonPath(t, t.TempDir()), "outside.txt")
		if err := os.WriteFile(outside, []byte("secret-outside"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(s.WorkspaceDir, "link.txt")); err != nil {
			t.Fatal(err)
		}
		up, err := filepath.Rel(canonPath(t, s.WorkspaceDir), outside)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{up, "link.txt", outside} {
			args, _ := json.Marshal(map[string]string{"path": p})
			tr := c.promptAnswering(s.SessionID, "/tool file_read "+string(args), func(u api.SessionUpdate) *api.SessionApproveParams {
				t.Fatalf("asked about a path outside the workspace: %+v", u)
				return nil
			})
			wantShape(t, tr.events, "context_usage", "tool_call:file_read", "tool_result:file_read", "context_usage", "turn_complete:completed")
			r := toolResult(t, tr)
			if out := output(t, r); !r.IsError || !strings.HasPrefix(out, "refused: ") || !contains(out, "outside the workspace") || contains(out, "secret-outside") {
				t.Fatalf("file_read %s: tool_result = %q (error %v)", p, out, r.IsError)
			}
		}
		// Control: the same tool reads inside the workspace.
		if err := os.WriteFile(filepath.Join(s.WorkspaceDir, "inside.txt"), []byte("inside-ok"), 0o600); err != nil {
			t.Fatal(err)
		}
		tr := c.prompt(s.SessionID, `/tool file_read {"path":"inside.txt"}`, hooks{})
		if r := toolResult(t, tr); r.IsError || !contains(output(t, r), "inside-ok") {
			t.Fatalf("file_read inside: %q (error %v)", output(t, r), r.IsError)
		}
	})
}

// ask_user over the socket: a client that declared clientCapabilities.elicitation.form gets elicitation/create
// and its answer reaches the model; a client that did not is never asked and the model learns why.
func TestElicitationOverSocket(t *testing.T) {
	t.Parallel()
	d := startApprovals(t)
	const ask = `/tool ask_user {"question":"color?","choices":["red","blue"]}`

	t.Run("client answers", func(t *testing.T) {
		c := dialRC(t, d, `{"elicitation":{"form":{}}}`)
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		var got []api.ElicitationParams
		answer := func(action, content string) func(frame) {
			return func(f frame) {
				if f.Method != api.MethodElicitationCreate {
					t.Fatalf("unexpected request %s", f.Raw)
				}
				var p api.ElicitationParams
				if err := json.Unmarshal(f.Params, &p); err != nil {
					t.Fatal(err)
				}
				got = append(got, p)
				reply := `{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":{"action":"` + action + `"` + content + `}}`
				c.Send(reply)
			}
		}
		var firstID string
		tr := c.prompt(s.SessionID, ask, hooks{onRequest: func(f frame) {
			firstID = idOf(f)
			answer("accept", `,"content":{"answer":"blue"}`)(f)
		}})
		if tr.err != nil {
			t.Fatalf("prompt: %s", tr.err)
		}
		wantShape(t, tr.events, "context_usage", "tool_call:ask_user", "tool_result:ask_user", "context_usage", "turn_complete:completed")
		if r := toolResult(t, tr); r.IsError || output(t, r) != "blue" {
			t.Fatalf("tool_result = %q (error %v)", output(t, r), r.IsError)
		}
		checkTold(t, tr, "ask_user", "blue")
		if firstID != "zc-out-0" {
			t.Fatalf("first elicitation id = %q, want zc-out-0", firstID)
		}
		if len(got) != 1 || got[0].SessionID != s.SessionID || got[0].Mode != "form" || got[0].Message != "color?" {
			t.Fatalf("elicitation/create params = %+v", got)
		}
		schema, _ := json.Marshal(got[0].RequestedSchema)
		// upstream's single-select form (zeroclaw-api/src/elicitation.rs); the older {answer} reply still works.
		if !contains(string(schema), `"oneOf":[{"const":"choice-0","title":"red"},{"const":"choice-1","title":"blue"}]`) ||
			!contains(string(schema), `"required":["choice"]`) {
			t.Fatalf("requestedSchema = %s", schema)
		}

		// A decline is reported as such; the daemon numbers its requests per connection.
		var ids []string
		tr = c.prompt(s.SessionID, ask, hooks{onRequest: func(f frame) {
			ids = append(ids, idOf(f))
			answer("decline", "")(f)
		}})
		if r := toolResult(t, tr); !r.IsError || output(t, r) != "ask_user: the user declined to answer." {
			t.Fatalf("tool_result after decline = %q (error %v)", output(t, r), r.IsError)
		}
		if !slices.Equal(ids, []string{"zc-out-1"}) {
			t.Fatalf("second elicitation ids = %q, want [zc-out-1]", ids)
		}
	})

	t.Run("client without the capability", func(t *testing.T) {
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		tr := c.prompt(s.SessionID, ask, hooks{}) // any elicitation/create frame fails the test
		if tr.err != nil {
			t.Fatalf("prompt: %s", tr.err)
		}
		wantShape(t, tr.events, "context_usage", "tool_call:ask_user", "tool_result:ask_user", "context_usage", "turn_complete:completed")
		r := toolResult(t, tr)
		if !r.IsError || !contains(output(t, r), "no interactive client") {
			t.Fatalf("tool_result = %q (error %v)", output(t, r), r.IsError)
		}
		checkTold(t, tr, "ask_user", output(t, r))
	})
}
