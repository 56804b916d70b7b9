package provider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/provider/providertest"
)

// recorded is one request the fake backend received.
type recorded providertest.Request

// decode unmarshals the recorded body into a generic map.
func (r recorded) decode(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// fakeBackend is a providertest.Backend: it records every request and answers attempt i with responders[i]
// (the last responder repeats).
type fakeBackend struct{ *providertest.Backend }

func newFakeBackend(t testing.TB, responders ...http.HandlerFunc) *fakeBackend {
	t.Helper()
	return &fakeBackend{providertest.NewBackend(t, responders...)}
}

func (f *fakeBackend) requests() []recorded {
	var out []recorded
	for _, r := range f.Requests() {
		out = append(out, recorded(r))
	}
	return out
}

// The fake backends' wire helpers, shared with internal/rpctest.
var (
	readFixture  = providertest.Fixture
	splitFrames  = providertest.Frames
	streamFrames = providertest.Stream
	status       = providertest.Status
	hangUp       = providertest.HangUp
)

func streamFixture(t testing.TB, contentType, name string) http.HandlerFunc {
	return streamFrames(contentType, readFixture(t, name))
}

// blockAfter writes first, flushes, then blocks until the client goes away, closing gone when it notices.
func blockAfter(contentType string, first []byte, gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		w.Write(first)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

// waitClosed fails the test if ch is not closed soon; a liveness guard, not a timing assertion.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never happened", what)
	}
}

// eventLog records streamed events and renders them compactly for comparison.
type eventLog struct{ evs []Event }

func (l *eventLog) emit(ev Event) { l.evs = append(l.evs, ev) }

func (l *eventLog) String() string {
	var b strings.Builder
	for _, ev := range l.evs {
		switch ev.Type {
		case EventToolCall:
			b.WriteString("tool_call(" + ev.ToolCall.ID + " " + ev.ToolCall.Name + " " + string(ev.ToolCall.Arguments) + ")\n")
		default:
			b.WriteString(ev.Type.String() + "(" + ev.Text + ")\n")
		}
	}
	return b.String()
}

func sampleTools() []ToolSpec {
	return []ToolSpec{
		{Name: "shell", Description: "Run a shell command", Parameters: json.RawMessage(
			`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
		{Name: "time", Description: "Current time"},
	}
}

// toolConversation is a history with a tool call and its result, exercising every message mapping.
func toolConversation() []Message {
	return []Message{
		{Role: RoleSystem, Content: "You are terse."},
		{Role: RoleUser, Content: "list files"},
		{Role: RoleAssistant, Content: "Checking.", ToolCalls: []ToolCall{
			{ID: "call_1", Name: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
			{ID: "call_2", Name: "time", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: RoleTool, ToolCallID: "call_1", Name: "shell", Content: "a.txt"},
		{Role: RoleTool, ToolCallID: "call_2", Content: "12:00"},
	}
}

func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	json.Unmarshal(gb, &g)
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON for %s: %v", what, err)
	}
	gn, _ := json.Marshal(g)
	wn, _ := json.Marshal(w)
	if !bytes.Equal(gn, wn) {
		t.Fatalf("%s:\n got %s\nwant %s", what, gn, wn)
	}
}
