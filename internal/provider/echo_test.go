package provider

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func newTestEcho(t *testing.T) Provider {
	t.Helper()
	p, err := New(Settings{Family: "echo"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// collect streams req and returns the events seen.
func collect(ctx context.Context, t *testing.T, p Provider, req Request) ([]Event, Result, error) {
	t.Helper()
	var evs []Event
	res, err := p.Stream(ctx, req, func(ev Event) { evs = append(evs, ev) })
	return evs, res, err
}

func TestEchoRepeatsLastUserMessageInWordChunks(t *testing.T) {
	t.Parallel()
	p := newTestEcho(t)
	if p.Alias() != "echo.default" {
		t.Fatalf("Alias = %q", p.Alias())
	}
	text := "  hello  wide\tworld \n again "
	evs, res, err := collect(t.Context(), t, p, Request{Messages: []Message{
		{Role: RoleSystem, Content: "be brief"},
		{Role: RoleUser, Content: text},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, ev := range evs {
		if ev.Type != EventText {
			t.Fatalf("unexpected event %v", ev.Type)
		}
		got.WriteString(ev.Text)
	}
	if got.String() != text || res.Text != text {
		t.Fatalf("chunks %q / result %q, want %q", got.String(), res.Text, text)
	}
	if len(evs) != 4 {
		t.Fatalf("got %d chunks, want one per word (4): %+v", len(evs), evs)
	}
	if res.Usage != (Usage{Model: "echo", InputTokens: 6, OutputTokens: 4}) {
		t.Fatalf("usage = %+v", res.Usage)
	}
	if res.StopReason != "stop" || len(res.ToolCalls) != 0 {
		t.Fatalf("stop %q calls %v", res.StopReason, res.ToolCalls)
	}
}

func TestEchoToolHookRoundTrip(t *testing.T) {
	t.Parallel()
	p := newTestEcho(t)
	msgs := []Message{{Role: RoleUser, Content: `/tool shell {"command": "ls -la"}`}}
	evs, res, err := collect(t.Context(), t, p, Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != EventToolCall {
		t.Fatalf("events = %+v, want exactly one tool call", evs)
	}
	tc := *evs[0].ToolCall
	if tc.ID != "echo-call-1" || tc.Name != "shell" || res.Text != "" || res.StopReason != "tool_calls" {
		t.Fatalf("call %+v text %q stop %q", tc, res.Text, res.StopReason)
	}
	var args struct{ Command string }
	if err := json.Unmarshal(tc.Arguments, &args); err != nil || args.Command != "ls -la" {
		t.Fatalf("args %s: %v", tc.Arguments, err)
	}

	msgs = append(msgs,
		Message{Role: RoleAssistant, ToolCalls: res.ToolCalls},
		Message{Role: RoleTool, ToolCallID: tc.ID, Content: "a.txt b.txt"})
	_, res, err = collect(t.Context(), t, p, Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if want := "tool shell returned: a.txt b.txt"; res.Text != want {
		t.Fatalf("text = %q, want %q", res.Text, want)
	}

	// A second hook in the same conversation gets the next id; missing args become {}.
	msgs = append(msgs, Message{Role: RoleAssistant, Content: res.Text}, Message{Role: RoleUser, Content: "/tool time"})
	_, res, err = collect(t.Context(), t, p, Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].ID != "echo-call-2" || string(res.ToolCalls[0].Arguments) != "{}" {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
}

func TestEchoToolResultUsesName(t *testing.T) {
	t.Parallel()
	p := newTestEcho(t)
	_, res, err := collect(t.Context(), t, p, Request{Messages: []Message{
		{Role: RoleTool, Name: "file_read", ToolCallID: "x", Content: "data"},
	}})
	if err != nil || res.Text != "tool file_read returned: data" {
		t.Fatalf("text %q err %v", res.Text, err)
	}
}

func TestEchoInvalidHookArgsCarriedAsString(t *testing.T) {
	t.Parallel()
	p := newTestEcho(t)
	_, res, err := collect(t.Context(), t, p, Request{Messages: []Message{{Role: RoleUser, Content: "/tool shell {oops"}}})
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(res.ToolCalls[0].Arguments, &s); err != nil || s != "{oops" {
		t.Fatalf("args %s: %v", res.ToolCalls[0].Arguments, err)
	}
}

func TestEchoCancelled(t *testing.T) {
	t.Parallel()
	p := newTestEcho(t)
	ctx, cancel := context.WithCancel(t.Context())
	n := 0
	_, err := p.Stream(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "one two three four"}}}, func(Event) {
		n++
		cancel()
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("err %v after %d events, want context.Canceled after 1", err, n)
	}
	if !strings.Contains(err.Error(), "echo.default") {
		t.Fatalf("error %q does not name the alias", err)
	}
}

func TestNewUnknownFamily(t *testing.T) {
	t.Parallel()
	_, err := New(Settings{Family: "gemini"})
	if !errors.Is(err, ErrUnknownFamily) {
		t.Fatalf("err = %v, want ErrUnknownFamily", err)
	}
}

func TestSplitWordsConcatenates(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", " ", "a", "a b", " a  b ", "héllo wörld\n", "\t\n"} {
		if got := strings.Join(splitWords(s), ""); got != s {
			t.Errorf("splitWords(%q) joins to %q", s, got)
		}
	}
}

func TestEchoNilEmit(t *testing.T) {
	t.Parallel()
	res, err := newTestEcho(t).Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "a b"}}}, nil)
	if err != nil || res.Text != "a b" {
		t.Fatalf("text %q err %v", res.Text, err)
	}
}

// A heartbeat task's prompt carries the hook after its "[Heartbeat Task | <priority>] " prefix; any other
// bracketed prefix does not make a hook.
func TestEchoHookAfterHeartbeatPrefix(t *testing.T) {
	t.Parallel()
	p := newTestEcho(t)
	_, res, err := collect(t.Context(), t, p, Request{Messages: []Message{{Role: RoleUser,
		Content: `[Heartbeat Task | high] /tool heartbeat_complete {"summary":"done"}`}}})
	if err != nil || len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "heartbeat_complete" {
		t.Fatalf("calls %+v err %v", res.ToolCalls, err)
	}
	_, res, err = collect(t.Context(), t, p, Request{Messages: []Message{{Role: RoleUser, Content: `[cron:x] /tool shell {}`}}})
	if err != nil || len(res.ToolCalls) != 0 {
		t.Fatalf("a cron prefix made a hook: %+v", res.ToolCalls)
	}
}
