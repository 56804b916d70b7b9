package rpctest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// openAIToolCall is a streamed OpenAI answer that calls one tool with args.
func openAIToolCall(name, args string) []byte {
	q, _ := json.Marshal(args)
	return openAISSE(
		`{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_m1","type":"function","function":{"name":"`+name+`","arguments":`+string(q)+`}}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	)
}

// lastUserContent returns the content of the last user message of a recorded chat request.
func lastUserContent(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	t.Fatalf("no user message in %s", body)
	return ""
}

// A fact the model stores with memory_store in one session is in the [Memory context] of the provider request
// of a new session after a daemon restart; another agent does not see it unless it opted in with
// read_memory_from. Auto-saved messages are kept under one key per turn and never injected.
func TestMemoryRecalledAcrossSessionsAndRestart(t *testing.T) {
	t.Parallel()
	llm := newLLM(t,
		stream(ctSSE, openAIToolCall("memory_store", `{"key":"user_name","content":"The user's name is Ada"}`)),
		stream(ctSSE, openAIText(5, 2, "Noted.")),
		stream(ctSSE, openAIText(5, 2, "Hello.")),
	)
	extra := `
[agents.b]
model_provider = "openai.fake"
risk_profile = "supervised"

[agents.c]
model_provider = "openai.fake"
risk_profile = "supervised"
workspace.read_memory_from = ["a"]
`
	cfg := agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "supervised", extra)
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	s1 := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := c.prompt(s1.SessionID, "Please remember that my name is Ada", hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("first turn: %+v %v", tr.result, tr.err)
	}
	if tr := c.prompt(s1.SessionID, "thanks", hooks{}); tr.err != nil {
		t.Fatalf("second turn: %v", tr.err)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d2 := StartOn(t, d.ConfigDir)
	c2 := dialRC(t, d2, "")
	prompt := "What is my name?"
	for _, agent := range []string{"a", "b", "c"} {
		s := c2.newSession(api.SessionNewParams{AgentAlias: agent})
		if tr := c2.prompt(s.SessionID, prompt, hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
			t.Fatalf("agent %s: %+v %v", agent, tr.result, tr.err)
		}
	}
	_, bodies := llm.requests()
	if len(bodies) != 6 {
		t.Fatalf("%d provider requests, want 6", len(bodies))
	}
	want := "[Memory context]\n- user_name: The user's name is Ada\n[/Memory context]\n\n" + prompt
	for i, agent := range map[int]string{3: "a", 5: "c"} {
		if got := lastUserContent(t, bodies[i]); got != want {
			t.Errorf("agent %s: last user message\n got %q\nwant %q", agent, got, want)
		}
	}
	if got := lastUserContent(t, bodies[4]); got != prompt {
		t.Errorf("agent b saw another agent's memory: %q", got)
	}
	// Both auto-saved messages of the first session exist (one key per turn), attributed to its session.
	var list api.MemoryEntriesResult
	c2.mustCall(api.MethodMemoryList, api.MemoryListParams{Category: "conversation", SessionID: "rpc_" + s1.SessionID, Agent: "a"}, &list)
	if list.Count != 2 {
		t.Fatalf("auto-saved messages of agent a: %+v", list)
	}
	for _, e := range list.Entries {
		if !strings.HasPrefix(e.Key, "user_msg_") || e.SessionID == nil || *e.SessionID != "rpc_"+s1.SessionID {
			t.Errorf("auto-saved entry %+v", e)
		}
	}
}

// memory/* over the socket: upstream's shapes, previews, errors.
func TestMemoryMethods(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	c := dialRC(t, d, "")
	var st api.MemoryStoreResult
	c.mustCall(api.MethodMemoryStore, api.MemoryStoreParams{Key: "long", Content: strings.Repeat("é", 150), Agent: "a"}, &st)
	if !st.Stored || st.Key != "long" {
		t.Fatalf("store: %+v", st)
	}
	var list api.MemoryEntriesResult
	c.mustCall(api.MethodMemoryList, api.MemoryListParams{}, &list)
	if list.Count != 1 || list.Entries[0].Content != strings.Repeat("é", 100)+"…" || list.Entries[0].Category != "user" ||
		list.Entries[0].AgentAlias == nil || *list.Entries[0].AgentAlias != "a" {
		t.Fatalf("list: %+v", list)
	}
	var got api.MemoryGetResult
	c.mustCall(api.MethodMemoryGet, api.MemoryGetParams{Key: "long"}, &got)
	if got.Entry.Content != strings.Repeat("é", 150) {
		t.Fatalf("get: %+v", got)
	}
	var search api.MemoryEntriesResult
	c.mustCall(api.MethodMemorySearch, api.MemorySearchParams{Query: "long"}, &search)
	if search.Count != 1 || search.Entries[0].Score == nil {
		t.Fatalf("search: %+v", search)
	}
	if _, werr := c.call(api.MethodMemorySearch, api.MemorySearchParams{}); werr == nil || werr.Code != -32602 {
		t.Fatalf("search without query: %+v", werr)
	}
	var del api.MemoryDeleteResult
	c.mustCall(api.MethodMemoryDelete, api.MemoryDeleteParams{Key: "long"}, &del)
	if !del.Deleted {
		t.Fatalf("delete: %+v", del)
	}
	// A missing key is not found (-32000), not an internal error, and forgetting it again says so.
	_, werr := c.call(api.MethodMemoryGet, api.MemoryGetParams{Key: "long"})
	if werr == nil || werr.Code != api.CodeNotFound || !strings.Contains(werr.Message, "Memory key `long` not found") {
		t.Fatalf("get after delete: %+v", werr)
	}
	_, werr = c.call(api.MethodMemoryDelete, api.MemoryDeleteParams{Key: "long"})
	if werr == nil || werr.Code != api.CodeNotFound || !strings.Contains(werr.Message, "Memory key `long` not found") {
		t.Fatalf("delete of a missing key: %+v", werr)
	}
	_, werr = c.call(api.MethodMemoryDelete, api.MemoryDeleteParams{Key: "long", Agent: "a"})
	if werr == nil || werr.Code != api.CodeNotFound {
		t.Fatalf("delete of a missing key of agent a: %+v", werr)
	}
}

// Bad memory/search queries and oversized memories are the caller's error (-32602, saying what is wrong), not
// the daemon's: a NUL byte, a query past memory.MaxQueryBytes, a key or content past its cap.
func TestMemoryBoundsAreInvalidParams(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	c := dialRC(t, d, "")
	for _, tc := range []struct {
		name   string
		method string
		params any
		msg    string
	}{
		{"NUL query", api.MethodMemorySearch, api.MemorySearchParams{Query: "cat\x00dog"}, "NUL"},
		{"100 KB query", api.MethodMemorySearch, api.MemorySearchParams{Query: strings.Repeat("word ", 20<<10)}, "at most 4096"},
		{"long key", api.MethodMemoryStore, api.MemoryStoreParams{Key: strings.Repeat("k", 300), Content: "v"}, "key is 300 bytes"},
		{"long content", api.MethodMemoryStore, api.MemoryStoreParams{Key: "k", Content: strings.Repeat("v", 70<<10)}, "content is 71680 bytes"},
	} {
		_, werr := c.call(tc.method, tc.params)
		if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Message, tc.msg) {
			t.Errorf("%s: %+v, want -32602 saying %q", tc.name, werr, tc.msg)
		}
	}
	// At the caps both work.
	c.mustCall(api.MethodMemoryStore, api.MemoryStoreParams{Key: strings.Repeat("k", 256), Content: "zebra " + strings.Repeat("v", 60<<10)}, nil)
	var found api.MemoryEntriesResult
	c.mustCall(api.MethodMemorySearch, api.MemorySearchParams{Query: "zebra " + strings.Repeat("w ", 2000)}, &found)
	if found.Count != 1 {
		t.Fatalf("search at the cap: %+v", found)
	}
}
