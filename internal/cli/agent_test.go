package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// fakeDaemon serves the native protocol on a real Unix socket with a scripted session/prompt, and records
// what the client sent.
type fakeDaemon struct {
	t      *testing.T
	sock   string
	prompt func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error)

	mu       sync.Mutex // mu guards the fields below
	initCaps json.RawMessage
	approves []api.SessionApproveParams
	cancels  []string

	approved  chan struct{} // one value per session/approve
	cancelled chan struct{} // one value per session/cancel
}

func newFakeDaemon(t *testing.T) *fakeDaemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "zcf") // short: socket paths are limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeDaemon{t: t, sock: filepath.Join(dir, "d.sock"), approved: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	ln, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			conn := jsonrpc.NewConn(jsonrpc.NewStream(nc), jsonrpc.HandlerFunc(f.handle), jsonrpc.Options{
				Concurrent: func(m string) bool { return m == api.MethodSessionPrompt },
			})
			wg.Go(func() { _ = conn.Serve(ctx) })
		}
	})
	return f
}

func (f *fakeDaemon) handle(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case api.MethodInitialize:
		var p struct {
			Caps json.RawMessage `json:"clientCapabilities"`
		}
		_ = json.Unmarshal(req.Params, &p)
		f.mu.Lock()
		f.initCaps = p.Caps
		f.mu.Unlock()
		return map[string]any{"protocol_version": 1}, nil
	case api.MethodSessionNew:
		return api.SessionNewResult{SessionID: "s1", AgentAlias: "default"}, nil
	case api.MethodSessionPrompt:
		var p api.SessionPromptParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		return f.prompt(ctx, c, p)
	case api.MethodSessionApprove:
		var p api.SessionApproveParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.approves = append(f.approves, p)
		f.mu.Unlock()
		f.approved <- struct{}{}
		return api.SessionApproveResult{SessionID: p.SessionID, RequestID: p.RequestID, Acknowledged: true}, nil
	case api.MethodSessionCancel:
		var p api.SessionIDParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.cancels = append(f.cancels, p.SessionID)
		f.mu.Unlock()
		f.cancelled <- struct{}{}
		return api.SessionCancelResult{SessionID: p.SessionID, Cancelled: true}, nil
	}
	return nil, jsonrpc.NewError(api.CodeMethodNotFound, "Unknown method: "+req.Method, nil)
}

// finish sends turn_complete and returns the matching prompt result.
func finish(c *jsonrpc.Conn, outcome, content, errText string) (api.SessionPromptResult, error) {
	_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateTurnComplete,
		Outcome: outcome, Content: &content, Error: errText})
	return api.SessionPromptResult{SessionID: "s1", Outcome: outcome, Content: content}, nil
}

func chunk(c *jsonrpc.Conn, text string) {
	_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateAgentMessageChunk, Text: text})
}

// lockedBuffer is an io.Writer safe for the client's goroutines and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runAgainst runs `zeroclaw args...` in-process against the fake daemon.
func (f *fakeDaemon) run(ctx context.Context, stdin string, args ...string) (string, string, int) {
	var out, errb lockedBuffer
	env := Env{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errb,
		Environ: []string{"ZEROCLAW_SOCKET=" + f.sock},
		Home:    filepath.Dir(f.sock),
	}
	code := Run(ctx, env, args)
	return out.String(), errb.String(), code
}

// Chunks are printed in the order the daemon sent them, with a final newline, even when many arrive at once.
func TestAgentPrintsChunksInOrder(t *testing.T) {
	f := newFakeDaemon(t)
	var want strings.Builder
	for i := range 300 {
		fmt.Fprintf(&want, "w%d ", i)
	}
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		if p.Prompt != "hi" || p.SessionID != "s1" {
			return api.SessionPromptResult{}, fmt.Errorf("unexpected prompt %+v", p)
		}
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateAgentThoughtChunk, Text: "thinking"})
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "other", Type: api.UpdateAgentMessageChunk, Text: "NOT OURS"})
		for i := range 300 {
			chunk(c, fmt.Sprintf("w%d ", i))
		}
		return finish(c, api.OutcomeCompleted, want.String(), "")
	}
	out, errOut, code := f.run(t.Context(), "", "agent", "-m", "hi")
	if code != 0 || out != want.String()+"\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "thinking") {
		t.Errorf("thought not shown on stderr: %q", errOut)
	}
	f.mu.Lock()
	caps := string(f.initCaps)
	f.mu.Unlock()
	if caps != `{"elicitation":{"form":{}}}` {
		t.Errorf("initialize clientCapabilities = %s", caps)
	}
}

// A failed turn exits 1 with the turn's error; a blank -m is refused before connecting.
func TestAgentFailedTurn(t *testing.T) {
	f := newFakeDaemon(t)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		chunk(c, "partial")
		return finish(c, api.OutcomeFailed, "", "provider default: upstream said 503")
	}
	out, errOut, code := f.run(t.Context(), "", "agent", "-m", "hi")
	if code != 1 || out != "partial\n" || !strings.Contains(errOut, "upstream said 503") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	_, errOut, code = f.run(t.Context(), "", "agent", "-m", "  ")
	if code != 1 || !strings.Contains(errOut, "non-blank") {
		t.Fatalf("blank -m: exit %d, stderr %q", code, errOut)
	}
}

// Approval answers map to decisions; EOF rejects.
func TestAgentApprovalDecisions(t *testing.T) {
	f := newFakeDaemon(t)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateToolCall,
			ToolCallID: "t1", Name: "shell", RawInput: json.RawMessage(`{"command":"ls"}`)})
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateApprovalRequest,
			RequestID: "req-" + p.Prompt, ToolName: "shell", ArgumentsSummary: "shell: ls", TimeoutSecs: 120})
		select {
		case <-f.approved:
		case <-ctx.Done():
			return api.SessionPromptResult{}, ctx.Err()
		}
		return finish(c, api.OutcomeCompleted, "done", "")
	}
	cases := []struct{ stdin, want string }{
		{"y\n", api.DecisionAllowOnce},
		{"YES\n", api.DecisionAllowOnce},
		{"a\n", api.DecisionAllowAlways},
		{"n\n", api.DecisionReject},
		{"maybe\n", api.DecisionReject},
		{"", api.DecisionReject},
	}
	for i, tc := range cases {
		out, errOut, code := f.run(t.Context(), tc.stdin, "agent", "-m", fmt.Sprint(i))
		if code != 0 || !strings.Contains(errOut, "Allow? [y]es / [n]o / [a]lways") || !strings.Contains(errOut, "shell: ls") {
			t.Fatalf("stdin %q: exit %d\nstdout %q\nstderr %q", tc.stdin, code, out, errOut)
		}
		f.mu.Lock()
		got := f.approves[len(f.approves)-1]
		f.mu.Unlock()
		if got.Decision != tc.want || got.RequestID != fmt.Sprintf("req-%d", i) || got.SessionID != "s1" {
			t.Errorf("stdin %q: approve %+v, want decision %s", tc.stdin, got, tc.want)
		}
	}
}

// Elicitation: a line accepts (a choice number picks the choice), EOF declines.
func TestAgentElicitation(t *testing.T) {
	f := newFakeDaemon(t)
	answers := make(chan api.ElicitationResult, 1)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		raw, err := c.Call(ctx, api.MethodElicitationCreate, api.ElicitationParams{SessionID: "s1", Mode: "form",
			Message: "Pick a color", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"answer": map[string]any{"type": "string", "enum": []string{"red", "blue"}}}}})
		if err != nil {
			return api.SessionPromptResult{}, err
		}
		var r api.ElicitationResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return api.SessionPromptResult{}, err
		}
		answers <- r
		return finish(c, api.OutcomeCompleted, "", "")
	}
	cases := []struct {
		stdin, action, answer string
	}{
		{"2\n", "accept", "blue"},
		{"green\n", "accept", "green"},
		{"", "decline", ""},
	}
	for _, tc := range cases {
		_, errOut, code := f.run(t.Context(), tc.stdin, "agent", "-m", "ask")
		if code != 0 || !strings.Contains(errOut, "Pick a color") || !strings.Contains(errOut, "1) red") {
			t.Fatalf("stdin %q: exit %d, stderr %q", tc.stdin, code, errOut)
		}
		r := <-answers
		if r.Action != tc.action || (tc.answer != "" && r.Content["answer"] != tc.answer) {
			t.Errorf("stdin %q: got %+v, want %s %q", tc.stdin, r, tc.action, tc.answer)
		}
	}
}

// Cancelling the command's context during a turn sends session/cancel and exits 130 once the daemon reports
// the cancelled turn; a pending approval question stops waiting for stdin.
func TestAgentInterruptSendsCancel(t *testing.T) {
	f := newFakeDaemon(t)
	asked := make(chan struct{})
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		chunk(c, "working")
		_ = c.Notify(api.NotifySessionUpdate, api.SessionUpdate{SessionID: "s1", Type: api.UpdateApprovalRequest,
			RequestID: "r1", ToolName: "shell", ArgumentsSummary: "shell: sleep 30"})
		close(asked)
		select {
		case <-f.cancelled:
		case <-ctx.Done():
			return api.SessionPromptResult{}, ctx.Err()
		}
		return finish(c, api.OutcomeCancelled, "", "")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-asked
		cancel()
	}()
	// A stdin that never ends: only the interrupt can end the approval question.
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb lockedBuffer
	env := Env{Stdin: pr, Stdout: &out, Stderr: &errb, Environ: []string{"ZEROCLAW_SOCKET=" + f.sock}, Home: filepath.Dir(f.sock)}
	code := Run(ctx, env, []string{"agent", "-m", "go"})
	if code != 130 || out.String() != "working\n" || !strings.Contains(errb.String(), "cancelling the turn") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cancels) != 1 || f.cancels[0] != "s1" || len(f.approves) != 0 {
		t.Fatalf("cancels %v approves %v: want one cancel of s1 and no approval answer", f.cancels, f.approves)
	}
}

// sessions subcommands and ids are checked before connecting.
func TestSessionsUsage(t *testing.T) {
	f := newFakeDaemon(t)
	f.prompt = func(ctx context.Context, c *jsonrpc.Conn, p api.SessionPromptParams) (api.SessionPromptResult, error) {
		return finish(c, api.OutcomeCompleted, "", "")
	}
	_, errOut, code := f.run(t.Context(), "", "sessions", "show")
	if code != 2 || !strings.Contains(errOut, "missing session id") {
		t.Fatalf("show without id: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = f.run(t.Context(), "", "sessions", "delete", "a", "b")
	if code != 2 || !strings.Contains(errOut, `unexpected argument "b"`) {
		t.Fatalf("delete with two ids: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = f.run(t.Context(), "", "sessions", "nope")
	if code != 1 || !strings.Contains(errOut, "Try: zeroclaw sessions") {
		t.Fatalf("unknown subcommand: exit %d, stderr %q", code, errOut)
	}
}

func TestParseWithID(t *testing.T) {
	for _, args := range [][]string{{"abc", "--limit", "3"}, {"--limit", "3", "abc"}} {
		fs := newFlagSet(Env{Stderr: io.Discard}, "x", "")
		limit := fs.Int("limit", 0, "")
		id, err := parseWithID(fs, args, "session id")
		if err != nil || id != "abc" || *limit != 3 {
			t.Errorf("%v: id %q limit %d err %v", args, id, *limit, err)
		}
	}
	fs := newFlagSet(Env{Stderr: io.Discard}, "x", "")
	if _, err := parseWithID(fs, nil, "session id"); !errors.Is(err, errUsage) {
		t.Errorf("no id: err %v", err)
	}
}

// The usage error names what is missing: a memory key is not a session id.
func TestParseWithIDNamesTheArgument(t *testing.T) {
	var out strings.Builder
	fs := flag.NewFlagSet("memory get", flag.ContinueOnError)
	fs.SetOutput(&out)
	if _, err := parseWithID(fs, nil, "key"); !errors.Is(err, errUsage) || !strings.Contains(out.String(), "missing key") {
		t.Fatalf("err %v, output %q", err, out.String())
	}
}
