package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// remoteIP is a non-loopback IPv4 address of this host, so a test can reach the gateway as a remote peer.
func remoteIP(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Fatal("this test needs a non-loopback IPv4 interface (CI has one) to play a remote gateway client")
	return ""
}

// The helpers below are the few the rpctest tests define for themselves that these tests use too, trimmed to
// what is used here: a typed native client, the raw call checks, a restricted user, and a fake OpenAI backend
// (provider/providertest will hold the one shared copy of the last).

// rc is a typed native client over the raw one: it numbers requests and collects a turn's events.
type rc struct {
	*rpctest.Client
	t    testing.TB
	next int
}

// dialRC connects and initializes; caps, when non-empty, is the clientCapabilities JSON object.
func dialRC(t testing.TB, d *rpctest.Daemon, caps string) *rc {
	t.Helper()
	c := &rc{Client: d.Dial(t), t: t}
	params := `{"protocol_version":1}`
	if caps != "" {
		params = `{"protocol_version":1,"clientCapabilities":` + caps + `}`
	}
	c.Send(`{"jsonrpc":"2.0","method":"initialize","params":` + params + `,"id":"init"}`)
	if f := c.Frame(); f.Error != nil || f.Result == nil {
		t.Fatalf("initialize failed: %s", f.Raw)
	}
	return c
}

// send writes a request and returns its id (a JSON string).
func (c *rc) send(method string, params any) string {
	c.t.Helper()
	c.next++
	id := fmt.Sprintf("r%d", c.next)
	c.Request(method, params, id)
	return id
}

func idOf(f ndjson.Frame) string {
	var s string
	_ = json.Unmarshal(f.ID, &s)
	return s
}

// call sends a request and reads frames until its response; any other frame fails the test.
func (c *rc) call(method string, params any) (json.RawMessage, *ndjson.Error) {
	c.t.Helper()
	id := c.send(method, params)
	f := c.Frame()
	if f.Method != "" || idOf(f) != id {
		c.t.Fatalf("%s: expected the response to %s, got %s", method, id, f.Raw)
	}
	return f.Result, f.Error
}

// mustCall is call that fails on an error response and decodes the result into out (when non-nil).
func (c *rc) mustCall(method string, params, out any) {
	c.t.Helper()
	res, werr := c.call(method, params)
	if werr != nil {
		c.t.Fatalf("%s: %s", method, werr)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			c.t.Fatalf("%s: decode %s: %v", method, res, err)
		}
	}
}

func (c *rc) newSession(p api.SessionNewParams) api.SessionNewResult {
	c.t.Helper()
	var r api.SessionNewResult
	c.mustCall(api.MethodSessionNew, p, &r)
	return r
}

// turn is what one session/prompt produced on the wire.
type turn struct {
	events []api.SessionUpdate
	result api.SessionPromptResult
	err    *ndjson.Error
}

// hooks react to frames that arrive while a prompt is in flight.
type hooks struct {
	onUpdate  func(api.SessionUpdate)             // each session/update, after it was recorded
	onRequest func(f ndjson.Frame)                // daemon→client requests (elicitation/create)
	onOther   func(f ndjson.Frame) (handled bool) // responses to other requests sent meanwhile
}

// prompt sends session/prompt and reads until its response, collecting the events of the turn.
func (c *rc) prompt(sid, text string, h hooks) turn {
	c.t.Helper()
	id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: text})
	return c.await(id, h)
}

// await reads frames until the response with id, dispatching everything else through h.
func (c *rc) await(id string, h hooks) turn {
	c.t.Helper()
	var tr turn
	for {
		f := c.Frame()
		switch {
		case f.Method == api.NotifySessionUpdate:
			var u api.SessionUpdate
			if err := json.Unmarshal(f.Params, &u); err != nil {
				c.t.Fatalf("bad session/update %s: %v", f.Raw, err)
			}
			tr.events = append(tr.events, u)
			if h.onUpdate != nil {
				h.onUpdate(u)
			}
		case f.Method != "":
			if h.onRequest == nil {
				c.t.Fatalf("unexpected request from the daemon: %s", f.Raw)
			}
			h.onRequest(f)
		case idOf(f) == id:
			tr.err = f.Error
			if f.Error == nil {
				if err := json.Unmarshal(f.Result, &tr.result); err != nil {
					c.t.Fatalf("bad prompt result %s: %v", f.Raw, err)
				}
			}
			return tr
		default:
			if h.onOther == nil || !h.onOther(f) {
				c.t.Fatalf("unexpected frame while waiting for %s: %s", id, f.Raw)
			}
		}
	}
}

// call sends a request on a raw client and returns its response, skipping notifications.
func call(t *testing.T, c *rpctest.Client, id int, method string, params any) map[string]any {
	t.Helper()
	c.Request(method, params, id)
	for {
		m := c.Next()
		if _, isNote := m["method"]; isNote {
			continue
		}
		if m["id"] != float64(id) {
			t.Fatalf("response id %v, want %d", m["id"], id)
		}
		return m
	}
}

func mustResult(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	return r
}

func mustError(t *testing.T, m map[string]any, code int) map[string]any {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok || e["code"] != float64(code) {
		t.Fatalf("expected error %d, got %v", code, m)
	}
	data, _ := e["data"].(map[string]any)
	return data
}

// asUser is a config in which this test process's uid is the plain user "alice" with the given grants (every
// connection the test opens then acts as alice, not as the admin operator).
func asUser(grants ...string) rpctest.Option {
	g, _ := json.Marshal(grants)
	return rpctest.WithConfig(fmt.Sprintf("%s\n[permission_profiles.limited]\ngrants = %s\n\n[users.alice]\nuid = %d\npermission_profiles = [\"limited\"]\n",
		config.DefaultTOML(), g, os.Getuid()))
}

// waitFor polls cond until it holds; the deadline only bounds a hung test, it asserts nothing about speed.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// agentConfig is a config with one agent "a" on the given provider reference and risk profile; extra is
// appended verbatim.
func agentConfig(providerTOML, ref, profile, extra string) string {
	return fmt.Sprintf(`schema_version = 3

%s

[agents.a]
model_provider = %q
risk_profile = %q

[risk_profiles.readonly]
level = "readonly"
workspace_only = true

[risk_profiles.supervised]
level = "supervised"
workspace_only = true

[risk_profiles.full]
level = "full"
workspace_only = true
%s`, providerTOML, ref, profile, extra)
}

// fakeProviderTOML configures <family>.fake against a fake server.
func fakeProviderTOML(family, uri string) string {
	return fmt.Sprintf("[providers.models.%s.fake]\nuri = %q\nmodel = \"m\"\napi_key = \"sk-test\"\ntimeout_secs = 60\n", family, uri)
}

// newLLM is a fake model backend: request i is answered by responders[i] (the last one repeats).
func newLLM(t testing.TB, responders ...http.HandlerFunc) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		h := responders[min(n, len(responders)-1)]
		n++
		mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const ctSSE = "text/event-stream"

// stream answers with body written SSE event by event, flushed after each, so the daemon sees real chunking.
func stream(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		for _, f := range bytes.SplitAfter(body, []byte("\n\n")) {
			if len(bytes.TrimSpace(f)) == 0 {
				continue
			}
			if _, err := w.Write(f); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// openAIText is a streamed OpenAI answer made of the given text deltas and a usage chunk.
func openAIText(in, out int, deltas ...string) []byte {
	var b bytes.Buffer
	for _, d := range deltas {
		q, _ := json.Marshal(d)
		fmt.Fprintf(&b, "data: %s\n\n", `{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"content":`+string(q)+`},"finish_reason":null}]}`)
	}
	fmt.Fprintf(&b, "data: %s\n\n", `{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	fmt.Fprintf(&b, "data: %s\n\n", fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out))
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}
