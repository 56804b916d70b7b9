package rpctest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/provider/providertest"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// frame is one decoded frame from the daemon: a response, a notification or a daemon→client request.
type frame = ndjson.Frame

type wireError = ndjson.Error

// rc is a typed client over the raw Client: it numbers requests, decodes frames and collects turn events.
type rc struct {
	*Client
	t    testing.TB
	next int
}

// dialRC connects and initializes; caps, when non-empty, is the clientCapabilities JSON object.
func dialRC(t testing.TB, d *Daemon, caps string) *rc {
	t.Helper()
	c := &rc{Client: d.Dial(t), t: t}
	params := `{"protocol_version":1}`
	if caps != "" {
		params = `{"protocol_version":1,"clientCapabilities":` + caps + `}`
	}
	c.Send(`{"jsonrpc":"2.0","method":"initialize","params":` + params + `,"id":"init"}`)
	if f := c.recv(); f.Error != nil || f.Result == nil {
		t.Fatalf("initialize failed: %s", f.Raw)
	}
	return c
}

func (c *rc) recv() frame {
	c.t.Helper()
	return c.Frame()
}

// send writes a request and returns its id (a JSON string).
func (c *rc) send(method string, params any) string {
	c.t.Helper()
	c.next++
	id := fmt.Sprintf("r%d", c.next)
	c.Request(method, params, id)
	return id
}

func idOf(f frame) string {
	var s string
	_ = json.Unmarshal(f.ID, &s)
	return s
}

// call sends a request and reads frames until its response; any other frame fails the test.
func (c *rc) call(method string, params any) (json.RawMessage, *wireError) {
	c.t.Helper()
	id := c.send(method, params)
	f := c.recv()
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

func (c *rc) messages(sid string) api.SessionMessagesResult {
	c.t.Helper()
	var r api.SessionMessagesResult
	c.mustCall(api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: sid, Limit: 1000}, &r)
	return r
}

func (c *rc) state(sid string) string {
	c.t.Helper()
	var r api.SessionStateResult
	c.mustCall(api.MethodSessionState, api.SessionIDParams{SessionID: sid}, &r)
	return r.State
}

// turn is everything one session/prompt produced on the wire.
type turn struct {
	events []api.SessionUpdate
	result api.SessionPromptResult
	err    *wireError
}

// hooks react to frames that arrive while a prompt is in flight.
type hooks struct {
	onUpdate  func(api.SessionUpdate)      // each session/update, after it was recorded
	onRequest func(f frame)                // daemon→client requests (elicitation/create)
	onOther   func(f frame) (handled bool) // responses to other requests sent meanwhile
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
		f := c.recv()
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

// kinds renders events as "type[:detail]" for exact sequence comparisons: chunks carry their text, tool
// events their tool name, turn_complete its outcome, context_usage its token counts.
func kinds(evs []api.SessionUpdate) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		s := e.Type
		switch e.Type {
		case api.UpdateAgentMessageChunk, api.UpdateAgentThoughtChunk:
			s += ":" + e.Text
		case api.UpdateToolCall, api.UpdateToolResult:
			s += ":" + e.Name
		case api.UpdateApprovalRequest:
			s += ":" + e.ToolName
		case api.UpdateTurnComplete:
			s += ":" + e.Outcome
		case api.UpdateContextUsage:
			s += fmt.Sprintf(":%d/%d", deref(e.InputTokens), deref(e.OutputTokens))
		}
		out = append(out, s)
	}
	return out
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func wantKinds(t testing.TB, evs []api.SessionUpdate, want ...string) {
	t.Helper()
	if got := kinds(evs); !slices.Equal(got, want) {
		t.Fatalf("event sequence:\n got  %q\n want %q", got, want)
	}
}

// only returns the events of type typ.
func only(evs []api.SessionUpdate, typ string) []api.SessionUpdate {
	var out []api.SessionUpdate
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func output(t testing.TB, e api.SessionUpdate) string {
	t.Helper()
	if e.RawOutput == nil {
		t.Fatalf("%s event without raw_output", e.Type)
	}
	return *e.RawOutput
}

// agentConfig is a config with one agent "a" on the given provider reference and risk profile; extra is
// appended verbatim (more providers, agents, profiles, [rpc] limits).
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

// llm is a fake model backend (providertest.Backend) speaking one family's wire format. Request i is answered
// by responders[i] (the last one repeats); every request is recorded.
type llm struct{ *providertest.Backend }

func newLLM(t testing.TB, responders ...http.HandlerFunc) *llm {
	t.Helper()
	return &llm{providertest.NewBackend(t, responders...)}
}

func (f *llm) requests() (paths []string, bodies [][]byte) {
	for _, r := range f.Requests() {
		paths, bodies = append(paths, r.Path), append(bodies, r.Body)
	}
	return paths, bodies
}

// The fake backends' wire helpers, shared with the provider package's tests.
var (
	fixture    = providertest.Fixture
	wireFrames = providertest.Frames
	stream     = providertest.Stream
	openAISSE  = providertest.OpenAISSE
	openAIText = providertest.OpenAIText
)

const (
	ctSSE    = providertest.SSE
	ctNDJSON = providertest.NDJSON
)

// costLines reads data/state/costs.jsonl of an install.
func costLines(t testing.TB, d *Daemon) []store.CostRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(d.ConfigDir, "data", "state", "costs.jsonl"))
	if err != nil {
		t.Fatalf("cost ledger: %v", err)
	}
	defer f.Close()
	var out []store.CostRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r store.CostRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("cost line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
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

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// toolNames returns the names of the tools a recorded OpenAI chat request offered.
func toolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}
