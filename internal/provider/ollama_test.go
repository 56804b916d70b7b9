package provider

import (
	"errors"
	"testing"
)

func TestOllamaStreamTextWithThinking(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "application/x-ndjson", "ollama_text.ndjson"))
	p, err := New(Settings{Family: "ollama", Alias: "local", URI: srv.URL + "/", Model: "qwen3:4b",
		Temperature: ptr(0.7), MaxTokens: 128})
	if err != nil {
		t.Fatal(err)
	}
	if p.Alias() != "ollama.local" {
		t.Fatalf("alias %q", p.Alias())
	}
	var log eventLog
	res, err := p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, log.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "thought(The user says hi.)\ntext(Hello)\ntext(, wor)\ntext(ld!)\n"
	if got := log.String(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if res.Usage != (Usage{Model: "qwen3:4b", InputTokens: 26, OutputTokens: 5}) || res.StopReason != "stop" {
		t.Fatalf("result = %+v", res)
	}
	r := srv.requests()[0]
	if r.Method != "POST" || r.Path != "/api/chat" {
		t.Fatalf("%s %s", r.Method, r.Path)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Fatalf("Authorization sent without a key: %q", h)
	}
	jsonEq(t, "body", r.decode(t), `{"model":"qwen3:4b","messages":[{"role":"user","content":"hi"}],"stream":true,
		"options":{"temperature":0.7,"num_predict":128}}`)
}

func TestOllamaToolCallRoundTrip(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFixture(t, "application/x-ndjson", "ollama_tools.ndjson"))
	p, _ := New(Settings{Family: "ollama", URI: srv.URL, Model: "llama3.2"})
	var log eventLog
	res, err := p.Stream(t.Context(), Request{Messages: toolConversation(), Tools: sampleTools()}, log.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "tool_call(ollama-call-1 shell {\"command\":\"ls -la\"})\ntool_call(ollama-call-2 file_read {\"path\":\"notes.txt\"})\n"
	if got := log.String(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if len(res.ToolCalls) != 2 || res.Usage.InputTokens != 140 || res.Usage.OutputTokens != 38 {
		t.Fatalf("result = %+v", res)
	}
	body := srv.requests()[0].decode(t)
	if _, ok := body["options"]; ok {
		t.Fatal("options sent although neither temperature nor max_tokens is set")
	}
	jsonEq(t, "messages", body["messages"], `[
		{"role":"system","content":"You are terse."},
		{"role":"user","content":"list files"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"function":{"name":"shell","arguments":{"command":"ls"}}},
			{"function":{"name":"time","arguments":{}}}]},
		{"role":"tool","content":"a.txt","tool_name":"shell"},
		{"role":"tool","content":"12:00","tool_name":"time"}]`)
	jsonEq(t, "tools", body["tools"], `[
		{"type":"function","function":{"name":"shell","description":"Run a shell command",
			"parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},
		{"type":"function","function":{"name":"time","description":"Current time",
			"parameters":{"type":"object","properties":{}}}}]`)
}

func TestOllamaErrorLine(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFrames("application/x-ndjson", []byte(`{"error":"model \"nope\" not found, try pulling it first"}`+"\n")))
	p, _ := New(Settings{Family: "ollama", URI: srv.URL, Model: "nope"})
	_, err := p.Stream(t.Context(), hi(), func(Event) {})
	if !errors.Is(err, ErrStream) {
		t.Fatalf("err = %v, want ErrStream", err)
	}
	assertSafeError(t, err, "ollama.default")
}

func TestOllamaStringArguments(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, streamFrames("application/x-ndjson", []byte(
		`{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"name":"shell","arguments":"{\"command\":\"pwd\"}"}}]},"done":false}`+"\n"+
			`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`+"\n")))
	p, _ := New(Settings{Family: "ollama", URI: srv.URL})
	res, err := p.Stream(t.Context(), hi(), func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if tc := res.ToolCalls[0]; tc.ID != "call_x" || string(tc.Arguments) != `{"command":"pwd"}` {
		t.Fatalf("call = %+v (%s)", tc, tc.Arguments)
	}
}
