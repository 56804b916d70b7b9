package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/mcpserver"
)

// daemon stands in for the native method table at the edge the server is written against (CallFunc): it
// records each call and answers with answer. The real table is behind it in the gateway and e2e tests.
type daemon struct {
	mu     sync.Mutex
	calls  []string // "method params"
	answer func(method string) (any, error)
}

func (d *daemon) call(_ context.Context, method string, params json.RawMessage) (any, error) {
	d.mu.Lock()
	d.calls = append(d.calls, method+" "+string(params))
	d.mu.Unlock()
	if d.answer != nil {
		return d.answer(method)
	}
	return map[string]any{"ok": true}, nil
}

func (d *daemon) recorded() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// serve runs a stdio session of s for peer on pipes and returns the SDK client's session and the result of
// ServeStdio once it returns.
func serve(t *testing.T, s *mcpserver.Server, peer *mcpserver.Peer) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(t.Context(), sr, sw, peer) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "unit", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, done
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func errorOf(t *testing.T, res *mcp.CallToolResult) (int, string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not a tool error: %+v", res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	return body.Error.Code, body.Error.Message
}

// A tool forwards to its native method exactly the params its schema let through, and passes the answer on.
func TestForwardsToTheNativeMethod(t *testing.T) {
	d := &daemon{}
	cs, _ := serve(t, mcpserver.New(mcpserver.Options{}), &mcpserver.Peer{Label: "unit", Call: d.call})
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{mcpserver.ToolMemoryStore, map[string]any{"key": "k", "content": "c"}, `memory/store {"key":"k","content":"c"}`},
		{mcpserver.ToolMemorySearch, map[string]any{"query": "q", "limit": 3}, `memory/search {"query":"q","limit":3}`},
		{mcpserver.ToolSessionSearch, nil, `session/list {}`},
		{mcpserver.ToolSessionMessages, map[string]any{"session_id": "s", "before_index": 4}, `session/messages {"session_id":"s","before_index":4}`},
		{mcpserver.ToolCronList, nil, `cron/list {}`},
		{mcpserver.ToolCronAdd, map[string]any{"agent": "a", "schedule": map[string]any{"kind": "every", "every_ms": 1000}, "prompt": "p"},
			`cron/add {"agent":"a","schedule":{"every_ms":1000,"kind":"every"},"prompt":"p"}`},
		{mcpserver.ToolSopList, nil, `sops/list {}`},
		{mcpserver.ToolSopRun, map[string]any{"name": "n"}, `sops/run {"name":"n","payload":null}`},
		{mcpserver.ToolSopRun, map[string]any{"name": "n", "payload": `{"a":1}`}, `sops/run {"name":"n","payload":"{\"a\":1}"}`},
		{mcpserver.ToolSopRuns, nil, `sops/runs {"sop":null}`},
	} {
		res := call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %+v", c.tool, res.Content)
		}
		got := d.recorded()
		if len(got) == 0 || got[len(got)-1] != c.want {
			t.Errorf("%s forwarded %v, want %s", c.tool, got, c.want)
		}
	}
}

// sop_list's native result is a bare array; MCP's structuredContent must be an object, so it goes under "sops".
func TestSopListWrapsTheArray(t *testing.T) {
	d := &daemon{answer: func(string) (any, error) { return json.RawMessage(`[{"name":"a"},{"name":"b"}]`), nil }}
	cs, _ := serve(t, mcpserver.New(mcpserver.Options{}), &mcpserver.Peer{Label: "unit", Call: d.call})
	res := call(t, cs, mcpserver.ToolSopList, nil)
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || string(raw) != `{"sops":[{"name":"a"},{"name":"b"}]}` {
		t.Fatalf("sop_list: %s", raw)
	}
}

// The daemon's refusals keep their code and message; a lost daemon says so; an unknown failure is a generic
// -32603 whose cause goes to the log, not to the client.
func TestErrorsReachTheClient(t *testing.T) {
	var logs bytes.Buffer
	var lmu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		lmu.Lock()
		defer lmu.Unlock()
		return logs.Write(p)
	}), nil))
	answers := map[string]error{
		api.MethodMemoryStore:  jsonrpc.NewError(api.CodeForbidden, "Forbidden: missing grant memory:write", nil),
		api.MethodMemorySearch: mcpserver.ErrDaemonGone,
		api.MethodCronList:     errors.New("disk on fire at /secret/path"),
	}
	d := &daemon{answer: func(m string) (any, error) { return nil, answers[m] }}
	cs, _ := serve(t, mcpserver.New(mcpserver.Options{Logger: log}), &mcpserver.Peer{Label: "unit", Call: d.call})

	if code, msg := errorOf(t, call(t, cs, mcpserver.ToolMemoryStore, map[string]any{"key": "k", "content": "c"})); code != api.CodeForbidden || msg != "Forbidden: missing grant memory:write" {
		t.Errorf("forbidden: %d %q", code, msg)
	}
	if code, msg := errorOf(t, call(t, cs, mcpserver.ToolMemorySearch, map[string]any{"query": "q"})); code != -32603 || !strings.Contains(msg, "the daemon closed the connection") {
		t.Errorf("daemon gone: %d %q", code, msg)
	}
	code, msg := errorOf(t, call(t, cs, mcpserver.ToolCronList, nil))
	if code != -32603 || msg != "Internal error" {
		t.Errorf("unknown: %d %q", code, msg)
	}
	lmu.Lock()
	logged := logs.String()
	lmu.Unlock()
	if !strings.Contains(logged, "disk on fire") || !strings.Contains(logged, "method=cron_list") {
		t.Errorf("the cause was not logged: %s", logged)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A known principal without a tool's grant is refused before the daemon is asked; one with it goes through.
func TestKnownPrincipalRefusedBeforeTheDaemon(t *testing.T) {
	d := &daemon{}
	reader := &auth.Principal{Name: "reader", Grants: []string{api.GrantMemoryRead}}
	current := reader
	cs, _ := serve(t, mcpserver.New(mcpserver.Options{}), &mcpserver.Peer{Label: "unit", Principal: func() *auth.Principal { return current }, Call: d.call})
	if code, msg := errorOf(t, call(t, cs, mcpserver.ToolCronAdd, map[string]any{"schedule": "* * * * *"})); code != api.CodeForbidden || msg != "Forbidden: missing grant cron:create" {
		t.Fatalf("%d %q", code, msg)
	}
	if len(d.recorded()) != 0 {
		t.Fatalf("the daemon was asked: %v", d.recorded())
	}
	if res := call(t, cs, mcpserver.ToolMemorySearch, map[string]any{"query": "q"}); res.IsError {
		t.Fatalf("allowed call refused: %+v", res.Content)
	}
	// The principal is asked at each call: revoked, the session's calls are refused as the native table would.
	current = nil
	if code, msg := errorOf(t, call(t, cs, mcpserver.ToolMemorySearch, map[string]any{"query": "q"})); code != api.CodeAuthRequired || !strings.Contains(msg, "no longer paired") {
		t.Fatalf("revoked: %d %q", code, msg)
	}
	if n := len(d.recorded()); n != 1 {
		t.Fatalf("the daemon was asked %d times, want 1", n)
	}
}

// Drain waits for a tool call in flight (and gives up when its context ends first); Close ends the session.
func TestDrainWaitsForCallsThenCloseEnds(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	d := &daemon{answer: func(string) (any, error) {
		entered <- struct{}{}
		<-release
		return map[string]any{"jobs": []any{}}, nil
	}}
	s := mcpserver.New(mcpserver.Options{})
	cs, done := serve(t, s, &mcpserver.Peer{Label: "unit", Call: d.call})
	if s.Sessions() != 1 {
		t.Fatalf("sessions %d", s.Sessions())
	}
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolCronList, Arguments: map[string]any{}})
		answered <- res
	}()
	<-entered
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Drain(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("drain with a call in flight and an ended context: %v", err)
	}
	close(release)
	if err := s.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := <-answered; res == nil || res.IsError {
		t.Fatalf("the drained call: %+v", res)
	}
	s.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the stdio session")
	}
	if s.Sessions() != 0 {
		t.Fatalf("sessions after Close: %d", s.Sessions())
	}
}
