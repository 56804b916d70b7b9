package acp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// llm is a fake OpenAI-compatible backend: request i is answered by responders[i] (the last repeats); every
// request body is recorded.
type llm struct {
	*httptest.Server
	mu         sync.Mutex
	bodies     []string
	responders []http.HandlerFunc
	arrived    chan struct{} // one value per request, once its body is recorded
}

func newLLM(t testing.TB, responders ...http.HandlerFunc) *llm {
	t.Helper()
	f := &llm{responders: responders, arrived: make(chan struct{}, 64)}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.bodies)
		f.bodies = append(f.bodies, string(body))
		h := f.responders[min(n, len(f.responders)-1)]
		f.mu.Unlock()
		f.arrived <- struct{}{}
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *llm) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bodies)
}

// sse answers with OpenAI chat.completion.chunk events, flushed one by one.
func sse(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range append(chunks, "[DONE]") {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
	}
}

func chunk(delta, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}`
}

// answer streams text deltas and stops.
func answer(deltas ...string) http.HandlerFunc {
	var cs []string
	for _, d := range deltas {
		q, _ := json.Marshal(d)
		cs = append(cs, chunk(`{"content":`+string(q)+`}`, ""))
	}
	return sse(append(cs, chunk(`{}`, "stop"))...)
}

// toolCall streams one tool call.
func toolCall(id, name, args string) http.HandlerFunc {
	q, _ := json.Marshal(args)
	return sse(
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(q)+`}}]}`, ""),
		chunk(`{}`, "tool_calls"),
	)
}

// hang streams one delta, then holds the response open until the daemon goes away (a turn to cancel).
func hang(delta string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		q, _ := json.Marshal(delta)
		fmt.Fprintf(w, "data: %s\n\n", chunk(`{"content":`+string(q)+`}`, ""))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// config is one agent "a" on the fake backend; shell always asks under the supervised profile.
func config(uri string) string {
	return fmt.Sprintf(`schema_version = 3

[providers.models.openai.fake]
uri = %q
model = "m"
api_key = "sk-test"
timeout_secs = 60

[agents.a]
model_provider = "openai.fake"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
always_ask = ["shell"]
`, uri)
}

// acpSock is the ACP endpoint of a test daemon's install.
func acpSock(d *rpctest.Daemon) string { return filepath.Join(d.ConfigDir, "data", "acp.sock") }

// client is an ACP test client on the daemon's acp.sock.
type client struct {
	*ndjson.Client
	t    testing.TB
	next int
}

func dial(t testing.TB, d *rpctest.Daemon) *client {
	t.Helper()
	return &client{Client: ndjson.Dial(t, acpSock(d)), t: t}
}

// update is one session/update notification's params.update, decoded loosely.
type update map[string]any

func (u update) kind() string { s, _ := u["sessionUpdate"].(string); return s }

func (u update) text() string {
	c, _ := u["content"].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

// exchange is what one request produced: the updates that came before its response, and the response.
type exchange struct {
	updates []update
	result  json.RawMessage
	err     *ndjson.Error
}

// send writes a request with a fresh string id and returns the id.
func (c *client) send(method string, params any) string {
	c.t.Helper()
	c.next++
	id := fmt.Sprintf("r%d", c.next)
	c.Request(method, params, id)
	return id
}

// call sends a request and reads until its response; session/update notifications are collected, daemon→client
// requests go to onRequest (which must answer them), anything else fails the test.
func (c *client) call(method string, params any, onRequest func(ndjson.Frame)) exchange {
	c.t.Helper()
	return c.await(c.send(method, params), onRequest)
}

func (c *client) await(id string, onRequest func(ndjson.Frame)) exchange {
	c.t.Helper()
	var ex exchange
	for {
		f := c.Frame()
		switch {
		case f.Method == "session/update" && f.ID == nil:
			var p struct {
				SessionID string `json:"sessionId"`
				Update    update `json:"update"`
			}
			if err := json.Unmarshal(f.Params, &p); err != nil || p.SessionID == "" || p.Update.kind() == "" {
				c.t.Fatalf("session/update not in ACP shape: %s", f.Raw)
			}
			ex.updates = append(ex.updates, p.Update)
		case f.Method != "" && f.ID != nil:
			if onRequest == nil {
				c.t.Fatalf("unexpected request from the daemon: %s", f.Raw)
			}
			onRequest(f)
		case f.Method == "" && string(f.ID) == `"`+id+`"`:
			ex.result, ex.err = f.Result, f.Error
			return ex
		default:
			c.t.Fatalf("unexpected frame while waiting for %s: %s", id, f.Raw)
		}
	}
}

// mustCall is call that fails on an error response and decodes the result into out (when non-nil).
func (c *client) mustCall(method string, params, out any) exchange {
	c.t.Helper()
	ex := c.call(method, params, nil)
	if ex.err != nil {
		c.t.Fatalf("%s: %s", method, ex.err)
	}
	if out != nil {
		if err := json.Unmarshal(ex.result, out); err != nil {
			c.t.Fatalf("%s: decode %s: %v", method, ex.result, err)
		}
	}
	return ex
}

func wantCode(t testing.TB, ex exchange, code int, msgPart string) {
	t.Helper()
	if ex.err == nil {
		t.Fatalf("want error %d, got result %s", code, ex.result)
	}
	if ex.err.Code != code || !strings.Contains(ex.err.Message, msgPart) {
		t.Fatalf("error = %d %q, want %d containing %q", ex.err.Code, ex.err.Message, code, msgPart)
	}
}

// newSession opens a session and returns its id and workspace.
func (c *client) newSession(params map[string]any) (string, string) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	var r struct {
		SessionID    string `json:"sessionId"`
		WorkspaceDir string `json:"workspaceDir"`
	}
	c.mustCall("session/new", params, &r)
	if r.SessionID == "" || r.WorkspaceDir == "" {
		c.t.Fatalf("session/new result lacks sessionId or workspaceDir: %+v", r)
	}
	return r.SessionID, r.WorkspaceDir
}

// stopReason decodes a session/prompt result.
func stopReason(t testing.TB, ex exchange) string {
	t.Helper()
	if ex.err != nil {
		t.Fatalf("session/prompt failed: %s", ex.err)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(ex.result, &r); err != nil {
		t.Fatal(err)
	}
	return r.StopReason
}

// kinds renders updates as "kind[:text or toolCallId/status]" for exact comparisons.
func kinds(us []update) []string {
	var out []string
	for _, u := range us {
		s := u.kind()
		switch s {
		case "agent_message_chunk", "user_message_chunk", "agent_thought_chunk":
			s += ":" + u.text()
		case "tool_call", "tool_call_update":
			s += fmt.Sprintf(":%v/%v", u["toolCallId"], u["status"])
		}
		out = append(out, s)
	}
	return out
}

func wantKinds(t testing.TB, us []update, want ...string) {
	t.Helper()
	if got := kinds(us); !slices.Equal(got, want) {
		t.Fatalf("updates:\n got  %q\n want %q", got, want)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}
