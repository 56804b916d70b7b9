package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/journal"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// harness runs turns against a real chat store and the echo provider, recording events and usage.
type harness struct {
	t      *testing.T
	chat   *store.ChatStore
	ws     string
	mu     sync.Mutex
	events []api.SessionUpdate
	usage  []provider.Usage
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	chat, err := store.OpenChat(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chat.Close() })
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, chat: chat, ws: ws}
}

func (h *harness) turn(p provider.Provider, policy tools.Policy, approver Approver) *Turn {
	h.t.Helper()
	hist, err := journal.LoadHistory(h.t.Context(), h.chat, "s1")
	if err != nil {
		h.t.Fatal(err)
	}
	return &Turn{
		Provider: p,
		Policy:   policy,
		ToolEnv:  tools.Env{Workspace: h.ws},
		History:  hist,
		Events:   &testEvents{h: h},
		Approver: approver,
		Journal: &testJournal{append: func(ctx context.Context, role, content string) error {
			_, err := h.chat.Append(ctx, "s1", role, content, time.Now())
			return err
		}},
		Meter:     usageMeter{h},
		SessionID: "s1",
	}
}

func (h *harness) types() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.events {
		out = append(out, ev.Type)
	}
	return out
}

func (h *harness) find(typ string) []api.SessionUpdate {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []api.SessionUpdate
	for _, ev := range h.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func (h *harness) rows() []store.Message {
	h.t.Helper()
	rows, err := h.chat.All(h.t.Context(), "s1")
	if err != nil {
		h.t.Fatal(err)
	}
	return rows
}

func echoProvider(t *testing.T) provider.Provider {
	t.Helper()
	p, err := provider.New(provider.Settings{Family: provider.FamilyEcho})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunStreamsChunksInOrderAndStoresBothMessages(t *testing.T) {
	h := newHarness(t)
	outcome, content, err := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil).Run(t.Context(), "hello big world")
	if err != nil || outcome != api.OutcomeCompleted || content != "hello big world" {
		t.Fatalf("Run = %q, %q, %v", outcome, content, err)
	}
	var text strings.Builder
	for _, ev := range h.find(api.UpdateAgentMessageChunk) {
		text.WriteString(ev.Text)
	}
	if text.String() != "hello big world" || len(h.find(api.UpdateAgentMessageChunk)) != 3 {
		t.Fatalf("chunks = %q (%d)", text.String(), len(h.find(api.UpdateAgentMessageChunk)))
	}
	if got := h.types(); got[len(got)-1] != api.UpdateContextUsage {
		t.Fatalf("context_usage should follow the stream, got %v", got)
	}
	if len(h.usage) != 1 || h.usage[0].OutputTokens != 3 {
		t.Fatalf("usage = %+v", h.usage)
	}
	rows := h.rows()
	if len(rows) != 2 || rows[0].Role != "user" || rows[1].Role != "assistant" || rows[1].Content != "hello big world" {
		t.Fatalf("rows = %+v", rows)
	}
}

func TestToolRoundTripUnderFull(t *testing.T) {
	h := newHarness(t)
	outcome, content, err := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil).
		Run(t.Context(), `/tool file_write {"path":"a.txt","content":"hi"}`)
	if err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %q, %v", outcome, content, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "a.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("a.txt = %q, %v", b, err)
	}
	if !strings.HasPrefix(content, "tool file_write returned:") {
		t.Fatalf("content = %q", content)
	}
	want := []string{api.UpdateContextUsage, api.UpdateToolCall, api.UpdateToolResult}
	if got := h.types()[:3]; !slices.Equal(got, want) {
		t.Fatalf("events start %v, want %v", got, want)
	}
	call := h.find(api.UpdateToolCall)[0]
	res := h.find(api.UpdateToolResult)[0]
	if call.ToolCallID != "echo-call-1" || res.ToolCallID != call.ToolCallID || res.IsError || string(call.RawInput) != `{"path":"a.txt","content":"hi"}` {
		t.Fatalf("tool events %+v / %+v", call, res)
	}
	if len(h.usage) != 2 {
		t.Fatalf("one usage per provider request: got %d", len(h.usage))
	}
	rows := h.rows()
	roles := []string{}
	for _, r := range rows {
		roles = append(roles, r.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant", "tool", "assistant"}) {
		t.Fatalf("roles = %v", roles)
	}
	hist := journal.DecodeHistory(rows)
	if len(hist) != 4 || len(hist[1].ToolCalls) != 1 || hist[1].ToolCalls[0].ID != "echo-call-1" ||
		hist[2].ToolCallID != "echo-call-1" || hist[2].Name != "file_write" || hist[3].Content != content {
		t.Fatalf("decoded history = %+v", hist)
	}

	// A second turn on the restored history gets a fresh call id from echo (it counts stored calls).
	h.events = nil
	if _, _, err := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil).
		Run(t.Context(), `/tool file_read {"path":"a.txt"}`); err != nil {
		t.Fatal(err)
	}
	if got := h.find(api.UpdateToolCall)[0].ToolCallID; got != "echo-call-2" {
		t.Fatalf("second call id = %q", got)
	}
	if got := *h.find(api.UpdateToolResult)[0].RawOutput; got != "hi" {
		t.Fatalf("file_read output = %q", got)
	}
}

// scriptedApprover answers every request with a fixed decision or error and records what it was asked.
type scriptedApprover struct {
	decision ApprovalDecision
	err      error
	asked    []ApprovalRequest
}

func (a *scriptedApprover) RequestApproval(_ context.Context, req ApprovalRequest) (ApprovalDecision, error) {
	a.asked = append(a.asked, req)
	req.Announce("")
	return a.decision, a.err
}

func TestSupervisedApprovalDecisions(t *testing.T) {
	prompt := `/tool file_write {"path":"a.txt","content":"orig"}`
	cases := []struct {
		name       string
		approver   *scriptedApprover
		wantFile   string // file that must exist afterwards
		wantAbsent string // file that must not exist
		wantOutput string
		wantError  bool
	}{
		{"allow_once", &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionAllowOnce}}, "a.txt", "", "", false},
		{"allow_always", &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionAllowAlways}}, "a.txt", "", "", false},
		{"reject", &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionReject}}, "", "a.txt", RejectedText, true},
		{"reject_once", &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionRejectOnce}}, "", "a.txt", RejectedText, true},
		{"reject_with_edit", &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionRejectWithEdit,
			Replacement: json.RawMessage(`{"path":"b.txt","content":"edited"}`)}}, "b.txt", "a.txt", "the user edited the arguments", false},
		{"timeout", &scriptedApprover{err: fmt.Errorf("x: %w", ErrApprovalTimeout)}, "", "a.txt", ApprovalTimeoutText, true},
		{"abandoned", &scriptedApprover{err: fmt.Errorf("x: %w", ErrApprovalAbandoned)}, "", "a.txt", ApprovalGoneText, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelSupervised, WorkspaceOnly: true}, tc.approver)
			tr.ApprovalTimeout = 7 * time.Second
			outcome, _, err := tr.Run(t.Context(), prompt)
			if err != nil || outcome != api.OutcomeCompleted {
				t.Fatalf("Run = %q, %v", outcome, err)
			}
			if len(tc.approver.asked) != 1 || tc.approver.asked[0].ToolName != "file_write" || tc.approver.asked[0].Timeout != 7*time.Second {
				t.Fatalf("asked = %+v", tc.approver.asked)
			}
			want := []string{api.UpdateContextUsage, api.UpdateToolCall, api.UpdateApprovalRequest, api.UpdateToolResult}
			if got := h.types()[:4]; !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			ar := h.find(api.UpdateApprovalRequest)[0]
			if ar.RequestID != tc.approver.asked[0].RequestID || ar.TimeoutSecs != 7 || !strings.Contains(ar.ArgumentsSummary, "a.txt") {
				t.Fatalf("approval_request = %+v", ar)
			}
			if tc.wantFile != "" {
				if _, err := os.Stat(filepath.Join(h.ws, tc.wantFile)); err != nil {
					t.Fatalf("%s should exist: %v", tc.wantFile, err)
				}
			}
			if tc.wantAbsent != "" {
				if _, err := os.Stat(filepath.Join(h.ws, tc.wantAbsent)); !os.IsNotExist(err) {
					t.Fatalf("%s must not exist: %v", tc.wantAbsent, err)
				}
			}
			res := h.find(api.UpdateToolResult)[0]
			if res.IsError != tc.wantError || !strings.Contains(*res.RawOutput, tc.wantOutput) {
				t.Fatalf("tool_result = %q is_error=%v", *res.RawOutput, res.IsError)
			}
		})
	}
}

func TestReadonlyNeverRunsShellAndOutsidePathRefused(t *testing.T) {
	h := newHarness(t)
	approver := &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionAllowOnce}}
	marker := filepath.Join(h.ws, "ran")
	if _, _, err := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelReadOnly}, approver).
		Run(t.Context(), fmt.Sprintf(`/tool shell {"command":"touch %s"}`, marker)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("shell ran under readonly: %v", err)
	}
	res := h.find(api.UpdateToolResult)[0]
	if !res.IsError || !strings.HasPrefix(*res.RawOutput, "refused: ") {
		t.Fatalf("tool_result = %+v", res)
	}

	outside := filepath.Join(t.TempDir(), "x.txt")
	h.events = nil
	if _, _, err := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelSupervised, WorkspaceOnly: true}, approver).
		Run(t.Context(), fmt.Sprintf(`/tool file_write {"path":%q,"content":"x"}`, outside)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("wrote outside the workspace: %v", err)
	}
	if res := h.find(api.UpdateToolResult)[0]; !res.IsError || !strings.Contains(*res.RawOutput, "outside the workspace") {
		t.Fatalf("tool_result = %+v", res)
	}
	if len(approver.asked) != 0 {
		t.Fatalf("refused calls must not be asked about: %+v", approver.asked)
	}
}

// loopProvider always calls the time tool: a model that never stops calling tools.
type loopProvider struct{ n int }

func (p *loopProvider) Alias() string { return "test.loop" }
func (p *loopProvider) Stream(_ context.Context, _ provider.Request, emit func(provider.Event)) (provider.Result, error) {
	p.n++
	tc := provider.ToolCall{ID: fmt.Sprintf("c%d", p.n), Name: "time", Arguments: json.RawMessage(`{}`)}
	emit(provider.Event{Type: provider.EventToolCall, ToolCall: &tc})
	return provider.Result{ToolCalls: []provider.ToolCall{tc}}, nil
}

func TestMaxStepsEndsARunawayTurn(t *testing.T) {
	h := newHarness(t)
	p := &loopProvider{}
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Limits.MaxToolRounds = 3
	outcome, _, err := tr.Run(t.Context(), "go")
	if outcome != api.OutcomeFailed || err == nil || !strings.Contains(err.Error(), ErrTooManySteps.Error()) {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if p.n != 4 || len(h.find(api.UpdateToolResult)) != 3 {
		t.Fatalf("provider calls %d, results %d", p.n, len(h.find(api.UpdateToolResult)))
	}
}

func TestAskUserTimeoutAndNoClient(t *testing.T) {
	const ask = `/tool ask_user {"question":"still there?"}`
	t.Run("timeout", func(t *testing.T) {
		h := newHarness(t)
		tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelSupervised}, nil)
		tr.ApprovalTimeout = 20 * time.Millisecond
		eventsOf(tr).elicit = func(ctx context.Context, _ api.ElicitationParams) (api.ElicitationResult, error) {
			<-ctx.Done() // a client that never answers
			return api.ElicitationResult{}, ctx.Err()
		}
		if _, _, err := tr.Run(t.Context(), ask); err != nil {
			t.Fatal(err)
		}
		r := h.find(api.UpdateToolResult)[0]
		if !r.IsError || !strings.Contains(*r.RawOutput, "did not answer in time") {
			t.Fatalf("tool_result %q", *r.RawOutput)
		}
	})
	t.Run("no client", func(t *testing.T) {
		h := newHarness(t)
		tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelSupervised}, nil)
		eventsOf(tr).elicit = func(context.Context, api.ElicitationParams) (api.ElicitationResult, error) {
			return api.ElicitationResult{}, fmt.Errorf("x: %w", ErrNoElicitation)
		}
		if _, _, err := tr.Run(t.Context(), ask); err != nil {
			t.Fatal(err)
		}
		if r := h.find(api.UpdateToolResult)[0]; !r.IsError || !strings.Contains(*r.RawOutput, "no interactive client") {
			t.Fatalf("tool_result %q", *r.RawOutput)
		}
	})
	t.Run("cancelled turn", func(t *testing.T) {
		h := newHarness(t)
		ctx, cancel := context.WithCancel(t.Context())
		tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelSupervised}, nil)
		eventsOf(tr).elicit = func(ctx context.Context, _ api.ElicitationParams) (api.ElicitationResult, error) {
			cancel()
			<-ctx.Done()
			return api.ElicitationResult{}, ctx.Err()
		}
		outcome, _, err := tr.Run(ctx, ask)
		if err != nil || outcome != api.OutcomeCancelled {
			t.Fatalf("Run = %q %v", outcome, err)
		}
		if r := h.find(api.UpdateToolResult)[0]; !strings.Contains(*r.RawOutput, "cancelled") {
			t.Fatalf("tool_result %q", *r.RawOutput)
		}
		// The cancelled turn still left a well-formed history: user, tool call, tool result.
		if rows := h.rows(); len(rows) != 3 || len(journal.DecodeHistory(rows)) != 3 {
			t.Fatalf("rows %+v", rows)
		}
	})
}
