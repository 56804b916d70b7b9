package rpctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// logEvent is the part of a logs/event notification the tests look at.
type logEvent struct {
	SubscriptionID string `json:"subscription_id"`
	Seq            uint64 `json:"seq"`
	ID             string `json:"id"`
	Event          struct {
		Category, Action, Outcome string
	} `json:"event"`
	Message  string         `json:"message"`
	Zeroclaw map[string]any `json:"zeroclaw"`
}

// readEvents reads frames until n logs/event notifications have arrived; any other frame fails the test.
func readEvents(t *testing.T, c *rc, n int) []logEvent {
	t.Helper()
	var out []logEvent
	for len(out) < n {
		f := c.recv()
		if f.Method != api.NotifyLogsEvent {
			t.Fatalf("expected logs/event, got %s", f.Raw)
		}
		var e logEvent
		if err := json.Unmarshal(f.Params, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// Live feed and persisted log over the socket: a subscriber gets every event in seq order while another
// subscriber reads nothing at all, the persisted log answers logs/query filters, cursors and logs/get, and a
// cursor older than the ring is told what it lost.
func TestLogsOverSocket(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig("schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n"+
		"[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n"+
		"[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[observability]\nlog_persistence = \"full\"\n"), WithLogRing(16))
	reader, sleeper, worker := dialRC(t, d, ""), dialRC(t, d, ""), dialRC(t, d, "")
	var sub api.LogsSubscribeResult
	reader.mustCall(api.MethodLogsSubscribe, map[string]any{}, &sub)
	var sleeping api.LogsSubscribeResult
	sleeper.mustCall(api.MethodLogsSubscribe, map[string]any{}, &sleeping) // and never reads again
	if sub.SubscriptionID == "" || sub.Epoch == "" || !sub.Subscribed || sub.Epoch != sleeping.Epoch {
		t.Fatalf("subscribe: %+v / %+v", sub, sleeping)
	}

	const turns = 25
	s := worker.newSession(api.SessionNewParams{})
	for i := range turns {
		if tr := worker.prompt(s.SessionID, fmt.Sprintf("hello %d", i), hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
			t.Fatalf("turn %d: %+v %v", i, tr.result, tr.err)
		}
	}
	all := readEvents(t, reader, 2*turns+2) // session created, turn start + turn complete each, one "no price for echo" note
	var evs []logEvent
	for i, e := range all {
		if e.Seq != sub.Seq+uint64(i)+1 || e.SubscriptionID != sub.SubscriptionID {
			t.Fatalf("event %d: seq %d sub %q, want seq %d", i, e.Seq, e.SubscriptionID, sub.Seq+uint64(i)+1)
		}
		if e.Event.Category == "provider" && strings.Contains(e.Message, "no price configured for model echo") {
			continue
		}
		if e.Event.Category == "session" {
			if i != 0 || e.Event.Action != "create" || e.Zeroclaw["agent_alias"] != "default" {
				t.Fatalf("event %d = %+v, want session/create first", i, e)
			}
			continue
		}
		evs = append(evs, e)
	}
	if len(evs) != 2*turns {
		t.Fatalf("%d agent events, want %d: %+v", len(evs), 2*turns, all)
	}
	for i, e := range evs {
		want := []string{"start", "complete"}[i%2]
		if e.Event.Category != "agent" || e.Event.Action != want || e.Zeroclaw["session_key"] == nil || e.Zeroclaw["agent_alias"] != "default" {
			t.Fatalf("event %d = %+v, want agent/%s with attribution", i, e, want)
		}
	}

	// Query: filters, byte cursor paging, get.
	var page api.LogsQueryResult
	reader.mustCall(api.MethodLogsQuery, map[string]any{"category": "agent", "action": "start", "limit": 10}, &page)
	if len(page.Events) != 10 || page.AtEnd || page.NextCursorLineOffset == nil {
		t.Fatalf("first page: %d events, at_end %v", len(page.Events), page.AtEnd)
	}
	total := len(page.Events)
	for !page.AtEnd {
		reader.mustCall(api.MethodLogsQuery, map[string]any{"category": "agent", "action": "start", "limit": 10,
			"until_line_offset": *page.NextCursorLineOffset}, &page)
		total += len(page.Events)
	}
	if total != turns {
		t.Fatalf("paging saw %d turn starts, want %d", total, turns)
	}
	var got api.LogsGetResult
	reader.mustCall(api.MethodLogsGet, api.LogsGetParams{ID: evs[3].ID}, &got)
	var one logEvent
	if err := json.Unmarshal(got.Event, &one); err != nil || one.ID != evs[3].ID || one.Event.Action != "complete" {
		t.Fatalf("logs/get: %s %v", got.Event, err)
	}
	if _, werr := reader.call(api.MethodLogsGet, api.LogsGetParams{ID: "no-such-id"}); werr == nil || !strings.Contains(werr.Message, "Log id `no-such-id` not found") {
		t.Fatalf("logs/get unknown: %v", werr)
	}
	if _, werr := reader.call(api.MethodLogsQuery, map[string]any{"limit": -1}); werr == nil || werr.Code != -32602 {
		t.Fatalf("negative limit: %v", werr)
	}

	// A cursor older than the ring (16 frames) is told exactly what it lost, then resumes in order.
	late := dialRC(t, d, "")
	late.mustCall(api.MethodLogsSubscribe, map[string]any{"since_seq": 0, "epoch": sub.Epoch}, nil)
	f := late.recv()
	var lag api.SubscriptionLagged
	if f.Method != api.NotifySubscriptionLagged || json.Unmarshal(f.Params, &lag) != nil {
		t.Fatalf("want subscription/lagged first, got %s", f.Raw)
	}
	head := all[len(all)-1].Seq
	if lag.FromSeq != 1 || lag.ResumeSeq != head-16+1 || lag.EpochChanged {
		t.Fatalf("lagged %+v, want from 1 resume %d", lag, head-16+1)
	}
	if rest := readEvents(t, late, 16); rest[0].Seq != lag.ResumeSeq || rest[15].Seq != head {
		t.Fatalf("after lag: seq %d..%d", rest[0].Seq, rest[15].Seq)
	}

	// The sleeper never held anything up; unsubscribe works on it.
	var un api.LogsUnsubscribeResult
	worker.mustCall(api.MethodStatus, map[string]any{}, nil)
	sleeper.Send(`{"jsonrpc":"2.0","method":"logs/unsubscribe","params":{"subscription_id":"` + sleeping.SubscriptionID + `"},"id":"u"}`)
	for {
		f := sleeper.recv()
		if f.Method == "" {
			if err := json.Unmarshal(f.Result, &un); err != nil || !un.Unsubscribed {
				t.Fatalf("unsubscribe: %s", f.Raw)
			}
			break
		}
	}
}

// With log_persistence = "none" nothing is written, live subscribers still get every event, and logs/query
// says persistence is off.
func TestLogsPersistenceNone(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig("schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n"+
		"[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n"+
		"[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[observability]\nlog_persistence = \"none\"\n"))
	c, w := dialRC(t, d, ""), dialRC(t, d, "")
	c.mustCall(api.MethodLogsSubscribe, map[string]any{}, nil)
	s := w.newSession(api.SessionNewParams{})
	w.prompt(s.SessionID, "hi", hooks{})
	if evs := readEvents(t, c, 4); evs[0].Event.Action != "create" || evs[1].Event.Action != "start" || evs[3].Event.Action != "complete" { // and the echo price note
		t.Fatalf("events %+v", evs)
	}
	if _, werr := c.call(api.MethodLogsQuery, map[string]any{}); werr == nil || werr.Message != "Log persistence is not enabled" {
		t.Fatalf("query: %v", werr)
	}
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "data", "state", "runtime-trace.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("runtime-trace.jsonl exists under none: %v", err)
	}
}

// A flow that handles an API key (a provider that echoes it back in its error, tool calls, config edits) leaves
// no trace of the key in any event, persisted or live.
func TestLogsCarryNoSecret(t *testing.T) {
	t.Parallel()
	const key = "zc-live-KEY-0123456789abcdef"
	fail := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, r.Header.Get("Authorization"))
	}
	// The model also names a tool after the key (model output is untrusted text that events quote).
	toolNamedKey := stream(ctSSE, openAISSE(
		`{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_k","type":"function","function":{"name":"`+key+`","arguments":"{}"}}]},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`))
	srv := newLLM(t, toolNamedKey, stream(ctSSE, openAIText(1, 1, "ok")), fail)
	prov := strings.Replace(fakeProviderTOML("openai", srv.URL), `"sk-test"`, `"`+key+`"`, 1)
	d := Start(t, WithConfig(agentConfig(prov, "openai.fake", "full", "\n[observability]\nlog_persistence = \"full\"\n")))
	c, w := dialRC(t, d, ""), dialRC(t, d, "")
	c.mustCall(api.MethodLogsSubscribe, map[string]any{}, nil)
	s := w.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := w.prompt(s.SessionID, "call it", hooks{}); tr.result.Outcome != api.OutcomeCompleted || len(only(tr.events, api.UpdateToolCall)) != 1 {
		t.Fatalf("tool turn: %+v %v", tr.result, kinds(tr.events))
	}
	for range 3 {
		if tr := w.prompt(s.SessionID, "use "+key+" please", hooks{}); tr.result.Outcome != api.OutcomeFailed {
			t.Fatalf("turn outcome %+v", tr.result)
		}
	}
	w.mustCall(api.MethodConfigSet, map[string]any{"prop": "providers.models.openai.fake.api_key", "value": key + "-rotated"}, nil)
	w.prompt(s.SessionID, "again", hooks{})
	evs := 0
	for evs < 14 { // tool turn (start, tool call, tool result, price note, complete), 4 turns × (start, fail), config change
		f := c.recv()
		if strings.Contains(string(f.Raw), "KEY-0123") {
			t.Fatalf("live event carries the key: %s", f.Raw)
		}
		evs++
	}
	raw, err := os.ReadFile(filepath.Join(d.ConfigDir, "data", "state", "runtime-trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "KEY-0123") || !strings.Contains(string(raw), `"action":"fail"`) {
		t.Fatalf("persisted log carries the key or lacks the failures:\n%s", raw)
	}
}
