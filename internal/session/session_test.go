package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

func setLevel(level string, timeoutSecs int) func(*config.Config) {
	return func(c *config.Config) {
		rp := c.RiskProfiles[config.LevelSupervised]
		rp.Level = level
		if timeoutSecs > 0 {
			rp.ApprovalTimeoutSecs = timeoutSecs
		}
		c.RiskProfiles[config.LevelSupervised] = rp
	}
}

func TestPromptStreamsAndCompletesLast(t *testing.T) {
	e := newEnv(t, nil)
	s := e.open(admin, api.SessionNewParams{})
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(s.SessionID) {
		t.Fatalf("session id %q is not a UUIDv4", s.SessionID)
	}
	if s.AgentAlias != "default" || s.MessageCount != 0 || s.WorkspaceDir != e.workspace() {
		t.Fatalf("New = %+v", s)
	}
	if fi, err := os.Stat(e.workspace()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("workspace: %v %v", fi, err)
	}
	sk := &sink{}
	res := e.prompt(s.SessionID, "hello streaming world", sk)
	if res.Outcome != api.OutcomeCompleted || res.Content != "hello streaming world" {
		t.Fatalf("result %+v", res)
	}
	want := []string{api.UpdateAgentMessageChunk, api.UpdateAgentMessageChunk, api.UpdateAgentMessageChunk, api.UpdateContextUsage, api.UpdateTurnComplete}
	if got := sk.types(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	st, err := e.m.State(t.Context(), admin, s.SessionID)
	if err != nil || st.State != "idle" || st.TurnID != "" {
		t.Fatalf("State = %+v, %v", st, err)
	}
	again := e.open(admin, api.SessionNewParams{SessionID: s.SessionID})
	if again.MessageCount != 2 {
		t.Fatalf("message_count = %d", again.MessageCount)
	}
	costs := e.costLines()
	if len(costs) != 1 || costs[0].SessionID != s.SessionID || costs[0].AgentAlias != "default" ||
		costs[0].Usage.Model != "echo" || costs[0].Usage.OutputTokens != 3 || costs[0].Usage.TotalTokens != costs[0].Usage.InputTokens+3 {
		t.Fatalf("costs = %+v", costs)
	}
	if ids := e.m.ActiveIDs(); !slices.Equal(ids, []string{s.SessionID}) {
		t.Fatalf("ActiveIDs = %v", ids)
	}
}

func TestToolRoundTripUnderFullAndCostPerRequest(t *testing.T) {
	e := newEnv(t, setLevel(config.LevelFull, 0))
	s := e.open(admin, api.SessionNewParams{})
	sk := &sink{}
	res := e.prompt(s.SessionID, `/tool file_write {"path":"notes/a.txt","content":"hi"}`, sk)
	if res.Outcome != api.OutcomeCompleted || !strings.HasPrefix(res.Content, "tool file_write returned:") {
		t.Fatalf("result %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace(), "notes", "a.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("file: %q %v", b, err)
	}
	if len(sk.of(api.UpdateApprovalRequest)) != 0 || len(sk.of(api.UpdateToolCall)) != 1 || len(sk.of(api.UpdateToolResult)) != 1 {
		t.Fatalf("events %v", sk.types())
	}
	if n := len(e.costLines()); n != 2 {
		t.Fatalf("costs.jsonl has %d lines, want one per provider request (2)", n)
	}
}

// approveWith answers every approval_request with decision (synchronously, from inside Update).
func approveWith(t *testing.T, e *env, sk *sink, decision string, replacement string) {
	sk.onUpdate = func(ev api.SessionUpdate) {
		if ev.Type != api.UpdateApprovalRequest {
			return
		}
		p := api.SessionApproveParams{SessionID: ev.SessionID, RequestID: ev.RequestID, Decision: decision}
		if replacement != "" {
			p.Replacement = json.RawMessage(replacement)
		}
		if res, err := e.m.Approve(admin, p); err != nil || !res.Acknowledged {
			t.Errorf("Approve: %+v %v", res, err)
		}
	}
}

func TestSupervisedApprovals(t *testing.T) {
	const write = `/tool file_write {"path":"a.txt","content":"orig"}`
	t.Run("allow_once runs", func(t *testing.T) {
		e := newEnv(t, nil)
		s := e.open(admin, api.SessionNewParams{})
		sk := &sink{}
		approveWith(t, e, sk, api.DecisionAllowOnce, "")
		e.prompt(s.SessionID, write, sk)
		if b, err := os.ReadFile(filepath.Join(e.workspace(), "a.txt")); err != nil || string(b) != "orig" {
			t.Fatalf("a.txt = %q %v", b, err)
		}
		ar := sk.of(api.UpdateApprovalRequest)
		if len(ar) != 1 || ar[0].ToolName != "file_write" || ar[0].TimeoutSecs != 120 || !strings.Contains(ar[0].ArgumentsSummary, "a.txt") {
			t.Fatalf("approval_request %+v", ar)
		}
		// allow_once is not remembered: the next call asks again.
		sk.reset()
		e.prompt(s.SessionID, write, sk)
		if len(sk.of(api.UpdateApprovalRequest)) != 1 {
			t.Fatalf("allow_once must not be remembered: %v", sk.types())
		}
	})
	t.Run("reject does not run", func(t *testing.T) {
		e := newEnv(t, nil)
		s := e.open(admin, api.SessionNewParams{})
		sk := &sink{}
		approveWith(t, e, sk, api.DecisionReject, "")
		e.prompt(s.SessionID, write, sk)
		if _, err := os.Stat(filepath.Join(e.workspace(), "a.txt")); !os.IsNotExist(err) {
			t.Fatalf("rejected call ran: %v", err)
		}
		if r := sk.of(api.UpdateToolResult)[0]; !r.IsError || *r.RawOutput != agent.RejectedText {
			t.Fatalf("tool_result %+v", r)
		}
	})
	t.Run("reject_with_edit runs the replacement", func(t *testing.T) {
		e := newEnv(t, nil)
		s := e.open(admin, api.SessionNewParams{})
		sk := &sink{}
		approveWith(t, e, sk, api.DecisionRejectWithEdit, `{"path":"b.txt","content":"edited"}`)
		e.prompt(s.SessionID, write, sk)
		if _, err := os.Stat(filepath.Join(e.workspace(), "a.txt")); !os.IsNotExist(err) {
			t.Fatalf("original call ran: %v", err)
		}
		if b, err := os.ReadFile(filepath.Join(e.workspace(), "b.txt")); err != nil || string(b) != "edited" {
			t.Fatalf("b.txt = %q %v", b, err)
		}
	})
	t.Run("allow_always is not asked twice", func(t *testing.T) {
		e := newEnv(t, nil)
		s := e.open(admin, api.SessionNewParams{})
		sk := &sink{}
		approveWith(t, e, sk, api.DecisionAllowAlways, "")
		e.prompt(s.SessionID, write, sk)
		sk.reset()
		sk.onUpdate = nil // nobody answers now: a question would time out after 120 s
		e.prompt(s.SessionID, `/tool file_write {"path":"c.txt","content":"again"}`, sk)
		if len(sk.of(api.UpdateApprovalRequest)) != 0 {
			t.Fatalf("asked again after allow_always: %v", sk.types())
		}
		if b, err := os.ReadFile(filepath.Join(e.workspace(), "c.txt")); err != nil || string(b) != "again" {
			t.Fatalf("c.txt = %q %v", b, err)
		}
	})
	t.Run("timeout denies", func(t *testing.T) {
		// The default timeout (120 s), on a clock the test moves: nobody answers, the wait ends exactly there.
		clock := clocktest.New(time.Unix(1_700_000_000, 0))
		e := newEnv(t, setLevel(config.LevelSupervised, 0), func(o *Options) { o.Clock = clock })
		s := e.open(admin, api.SessionNewParams{})
		asked := make(chan struct{})
		sk := &sink{onUpdate: func(ev api.SessionUpdate) {
			if ev.Type == api.UpdateApprovalRequest {
				close(asked)
			}
		}}
		done := make(chan api.SessionPromptResult, 1)
		go func() {
			res, err := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: write}, sk)
			if err != nil {
				t.Errorf("Prompt: %v", err)
			}
			done <- res
		}()
		<-asked
		if !clock.WaitTimer(120*time.Second, 20*time.Second) {
			t.Fatal("no 120 s approval wait was armed")
		}
		clock.Advance(120*time.Second - time.Nanosecond)
		live, _ := e.m.live(s.SessionID)
		live.mu.Lock()
		stillPending := len(live.pending)
		live.mu.Unlock()
		if stillPending != 1 || clock.Timers() != 1 {
			t.Fatalf("before the deadline: %d pending approvals, %d timers armed; want both 1", stillPending, clock.Timers())
		}
		clock.Advance(time.Nanosecond)
		res := <-done
		if res.Outcome != api.OutcomeCompleted {
			t.Fatalf("result %+v", res)
		}
		sk.checkComplete(t, res)
		if _, err := os.Stat(filepath.Join(e.workspace(), "a.txt")); !os.IsNotExist(err) {
			t.Fatalf("timed-out call ran: %v", err)
		}
		if r := sk.of(api.UpdateToolResult)[0]; !r.IsError || *r.RawOutput != agent.ApprovalTimeoutText {
			t.Fatalf("tool_result %+v", r)
		}
		if ar := sk.of(api.UpdateApprovalRequest)[0]; ar.TimeoutSecs != 120 {
			t.Fatalf("timeout_secs = %d", ar.TimeoutSecs)
		}
		// The expired request can no longer be answered.
		ack, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: s.SessionID, RequestID: sk.of(api.UpdateApprovalRequest)[0].RequestID, Decision: api.DecisionAllowOnce})
		if err != nil || ack.Acknowledged {
			t.Fatalf("late Approve = %+v, %v; want not acknowledged", ack, err)
		}
	})
	t.Run("disconnect denies and cancels, session survives", func(t *testing.T) {
		e := newEnv(t, nil)
		s := e.open(admin, api.SessionNewParams{})
		sk := &sink{onUpdate: func(ev api.SessionUpdate) {
			if ev.Type == api.UpdateApprovalRequest {
				e.m.Disconnected(admin.ConnID)
			}
		}}
		res := e.prompt(s.SessionID, write, sk)
		if res.Outcome != api.OutcomeCancelled {
			t.Fatalf("result %+v", res)
		}
		if _, err := os.Stat(filepath.Join(e.workspace(), "a.txt")); !os.IsNotExist(err) {
			t.Fatalf("call ran after disconnect: %v", err)
		}
		if r := sk.of(api.UpdateToolResult)[0]; !r.IsError || *r.RawOutput == "" {
			t.Fatalf("tool_result %+v", r)
		}
		sk2 := &sink{}
		if res := e.prompt(s.SessionID, "still here", sk2); res.Outcome != api.OutcomeCompleted || res.Content != "still here" {
			t.Fatalf("after disconnect: %+v", res)
		}
	})
}

func TestRiskRefusals(t *testing.T) {
	t.Run("readonly never runs shell", func(t *testing.T) {
		e := newEnv(t, setLevel(config.LevelReadonly, 0))
		s := e.open(admin, api.SessionNewParams{})
		marker := filepath.Join(e.workspace(), "ran")
		sk := &sink{}
		approveWith(t, e, sk, api.DecisionAllowOnce, "")
		e.prompt(s.SessionID, fmt.Sprintf(`/tool shell {"command":"touch %s"}`, marker), sk)
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Fatalf("shell ran under readonly: %v", err)
		}
		if len(sk.of(api.UpdateApprovalRequest)) != 0 || !sk.of(api.UpdateToolResult)[0].IsError {
			t.Fatalf("events %v", sk.types())
		}
	})
	t.Run("path outside the workspace is refused", func(t *testing.T) {
		e := newEnv(t, nil)
		s := e.open(admin, api.SessionNewParams{})
		outside := filepath.Join(e.root, "outside.txt")
		sk := &sink{}
		approveWith(t, e, sk, api.DecisionAllowOnce, "")
		e.prompt(s.SessionID, fmt.Sprintf(`/tool file_write {"path":%q,"content":"x"}`, outside), sk)
		if _, err := os.Stat(outside); !os.IsNotExist(err) {
			t.Fatalf("wrote outside the workspace: %v", err)
		}
		r := sk.of(api.UpdateToolResult)[0]
		if !r.IsError || !strings.HasPrefix(*r.RawOutput, "refused: ") || len(sk.of(api.UpdateApprovalRequest)) != 0 {
			t.Fatalf("tool_result %+v, events %v", r, sk.types())
		}
	})
}

func TestAskUserElicitation(t *testing.T) {
	const ask = `/tool ask_user {"question":"Which color?","choices":["red","blue"]}`
	cases := []struct {
		name    string
		answer  func() (api.ElicitationResult, error)
		want    string
		isError bool
	}{
		{"accept", func() (api.ElicitationResult, error) {
			return api.ElicitationResult{Action: "accept", Content: map[string]any{"choice": "choice-0"}}, nil
		}, "red", false},
		{"decline", func() (api.ElicitationResult, error) { return api.ElicitationResult{Action: "decline"}, nil }, "declined", true},
		{"cancel", func() (api.ElicitationResult, error) { return api.ElicitationResult{Action: "cancel"}, nil }, "cancelled", true},
		{"no capability", nil, "no interactive client", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			s := e.open(admin, api.SessionNewParams{})
			sk := &sink{}
			if tc.answer != nil {
				sk.elicit = func(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error) { return tc.answer() }
			}
			res := e.prompt(s.SessionID, ask, sk)
			r := sk.of(api.UpdateToolResult)[0]
			if r.IsError != tc.isError || !strings.Contains(*r.RawOutput, tc.want) || res.Outcome != api.OutcomeCompleted {
				t.Fatalf("tool_result %q is_error=%v, result %+v", *r.RawOutput, r.IsError, res)
			}
			if len(sk.asked) != 1 {
				t.Fatalf("elicit called %d times", len(sk.asked))
			}
			p := sk.asked[0]
			schema, _ := json.Marshal(p.RequestedSchema)
			// upstream's single-select form (zeroclaw-api/src/elicitation.rs), which zerocode renders
			wantSchema := `{"properties":{"choice":{"oneOf":[{"const":"choice-0","title":"red"},{"const":"choice-1","title":"blue"}],"title":"Choice","type":"string"}},"required":["choice"],"type":"object"}`
			if p.SessionID != s.SessionID || p.Mode != "form" || p.Message != "Which color?" || string(schema) != wantSchema {
				t.Fatalf("elicitation params %+v schema %s", p, schema)
			}
		})
	}
}
