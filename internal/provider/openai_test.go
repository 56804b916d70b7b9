package provider

import (
	"errors"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestOpenAIStreamText(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "text/event-stream", "openai_text.sse"))
	p, err := New(Settings{Family: "openai", Alias: "test", URI: srv.URL + "/v1/", APIKey: "sk-abc",
		Model: "gpt-4o-mini", Temperature: ptr(0.2), MaxTokens: 256,
		ExtraHeaders: map[string]string{"OpenAI-Organization": "org-1"}})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	res, err := p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, log.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "thought(User greets; )\nthought(answer kindly.)\ntext(Hello)\ntext(, wor)\ntext(ld!)\n"
	if got := log.String(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if res.Text != "Hello, world!" || res.StopReason != "stop" || len(res.ToolCalls) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if res.Usage != (Usage{Model: "gpt-4o-mini-2024-07-18", InputTokens: 19, OutputTokens: 4}) {
		t.Fatalf("usage = %+v", res.Usage)
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" {
		t.Fatalf("%s %s", r.Method, r.Path)
	}
	for k, v := range map[string]string{"Authorization": "Bearer sk-abc", "Content-Type": "application/json",
		"OpenAI-Organization": "org-1", "Accept": "text/event-stream"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	jsonEq(t, "body", r.decode(t), `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],
		"stream":true,"stream_options":{"include_usage":true},"temperature":0.2,"max_tokens":256}`)
}

func TestOpenAIToolCallRoundTrip(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "text/event-stream", "openai_tools.sse"))
	p, err := New(Settings{Family: "openai", URI: srv.URL, Model: "gpt-4o-mini"})
	if err != nil {
		t.Fatal(err)
	}
	var log eventLog
	res, err := p.Stream(t.Context(), Request{Messages: toolConversation(), Tools: sampleTools(), Model: "gpt-4.1"}, log.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "tool_call(call_abc123 shell {\"command\": \"ls -la\"})\ntool_call(call_def456 file_read {\"path\": \"notes.txt\"})\n"
	if got := log.String(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if len(res.ToolCalls) != 2 || res.ToolCalls[1].Name != "file_read" || res.StopReason != "tool_calls" || res.Text != "" {
		t.Fatalf("result = %+v", res)
	}
	if res.Usage.InputTokens != 88 || res.Usage.OutputTokens != 41 {
		t.Fatalf("usage = %+v", res.Usage)
	}

	r := srv.requests()[0]
	if r.Path != "/chat/completions" {
		t.Fatalf("path %s", r.Path)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Fatalf("Authorization sent without a key: %q", h)
	}
	body := r.decode(t)
	if body["model"] != "gpt-4.1" {
		t.Fatalf("Request.Model did not override: %v", body["model"])
	}
	if _, ok := body["temperature"]; ok {
		t.Fatal("temperature sent although unset")
	}
	jsonEq(t, "messages", body["messages"], `[
		{"role":"system","content":"You are terse."},
		{"role":"user","content":"list files"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\"}"}},
			{"id":"call_2","type":"function","function":{"name":"time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"a.txt"},
		{"role":"tool","tool_call_id":"call_2","content":"12:00"}]`)
	jsonEq(t, "tools", body["tools"], `[
		{"type":"function","function":{"name":"shell","description":"Run a shell command",
			"parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},
		{"type":"function","function":{"name":"time","description":"Current time",
			"parameters":{"type":"object","properties":{}}}}]`)
}

func TestOpenAIInBandErrorIsScrubbed(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFrames("text/event-stream",
		[]byte("data: {\"error\":{\"message\":\"Incorrect API key provided: sk-live-XYZ\",\"type\":\"invalid_request_error\"}}\n\n")))
	p, _ := New(Settings{Family: "openai", Alias: "prod", URI: srv.URL, APIKey: "sk-live-XYZ", RetryBase: 1})
	_, err := p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, func(Event) {})
	if !errors.Is(err, ErrStream) {
		t.Fatalf("err = %v, want ErrStream", err)
	}
	assertSafeError(t, err, "openai.prod", "sk-live-XYZ")
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("in-band error retried: %d requests", n)
	}
}
