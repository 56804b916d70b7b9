package provider

import (
	"errors"
	"testing"
)

func TestAnthropicStreamTextWithThinking(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "text/event-stream", "anthropic_text.sse"))
	p, err := New(Settings{Family: "anthropic", Alias: "claude", URI: srv.URL, APIKey: "sk-ant-1",
		Model: "claude-sonnet-4-20250514", ExtraHeaders: map[string]string{"anthropic-beta": "tools-2024"}})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	res, err := p.Stream(t.Context(), Request{Messages: []Message{
		{Role: RoleSystem, Content: "Be kind."}, {Role: RoleSystem, Content: "Be brief."}, {Role: RoleUser, Content: "hi"},
	}}, log.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "thought(A greeting; reply warmly.)\ntext(Hello)\ntext(, wor)\ntext(ld!)\n"
	if got := log.String(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if res.Usage != (Usage{Model: "claude-sonnet-4-20250514", InputTokens: 25, OutputTokens: 12}) || res.StopReason != "end_turn" {
		t.Fatalf("result = %+v", res)
	}
	r := srv.requests()[0]
	if r.Method != "POST" || r.Path != "/v1/messages" {
		t.Fatalf("%s %s", r.Method, r.Path)
	}
	for k, v := range map[string]string{"x-api-key": "sk-ant-1", "anthropic-version": "2023-06-01",
		"anthropic-beta": "tools-2024", "Content-Type": "application/json", "Authorization": ""} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	jsonEq(t, "body", r.decode(t), `{"model":"claude-sonnet-4-20250514","max_tokens":4096,
		"system":"Be kind.\n\nBe brief.","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],
		"stream":true}`)
}

func TestAnthropicToolCallRoundTrip(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "text/event-stream", "anthropic_tools.sse"))
	p, _ := New(Settings{Family: "anthropic", URI: srv.URL + "/", APIKey: "k", Model: "claude", MaxTokens: 1000,
		Temperature: ptr(0.0)})
	var log eventLog
	res, err := p.Stream(t.Context(), Request{Messages: toolConversation(), Tools: sampleTools()}, log.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "text(Let me look.)\ntool_call(toolu_01A shell {\"command\": \"ls -la\"})\ntool_call(toolu_01B file_read {\"path\": \"notes.txt\"})\n"
	if got := log.String(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if res.Text != "Let me look." || len(res.ToolCalls) != 2 || res.StopReason != "tool_use" ||
		res.Usage.InputTokens != 472 || res.Usage.OutputTokens != 89 {
		t.Fatalf("result = %+v", res)
	}
	body := srv.requests()[0].decode(t)
	if body["max_tokens"] != 1000.0 || body["temperature"] != 0.0 || body["system"] != "You are terse." {
		t.Fatalf("max_tokens %v temperature %v system %v", body["max_tokens"], body["temperature"], body["system"])
	}
	jsonEq(t, "messages", body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"list files"}]},
		{"role":"assistant","content":[{"type":"text","text":"Checking."},
			{"type":"tool_use","id":"call_1","name":"shell","input":{"command":"ls"}},
			{"type":"tool_use","id":"call_2","name":"time","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt"},
			{"type":"tool_result","tool_use_id":"call_2","content":"12:00"}]}]`)
	jsonEq(t, "tools", body["tools"], `[
		{"name":"shell","description":"Run a shell command",
			"input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},
		{"name":"time","description":"Current time","input_schema":{"type":"object","properties":{}}}]`)
}

func TestAnthropicErrorEvent(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "text/event-stream", "anthropic_error.sse"))
	p, _ := New(Settings{Family: "anthropic", URI: srv.URL, APIKey: testKey})
	_, err := p.Stream(t.Context(), hi(), func(Event) {})
	if !errors.Is(err, ErrStream) {
		t.Fatalf("err = %v, want ErrStream", err)
	}
	assertSafeError(t, err, "anthropic.default", testKey)
}
