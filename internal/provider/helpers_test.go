package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorded is one request the fake backend received.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// decode unmarshals the recorded body into a generic map.
func (r recorded) decode(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// fakeBackend is an httptest server that records every request and answers attempt i with responders[i]
// (the last responder repeats).
type fakeBackend struct {
	*httptest.Server
	mu         sync.Mutex
	reqs       []recorded
	responders []http.HandlerFunc
}

func newFakeBackend(t testing.TB, responders ...http.HandlerFunc) *fakeBackend {
	t.Helper()
	f := &fakeBackend{responders: responders}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		h := f.responders[min(n, len(f.responders)-1)]
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeBackend) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// splitFrames cuts a fixture into wire frames: SSE events (blank-line separated) or NDJSON lines.
func splitFrames(b []byte) [][]byte {
	sep := []byte("\n\n")
	if !bytes.Contains(b, sep) {
		sep = []byte("\n")
	}
	var frames [][]byte
	for _, f := range bytes.SplitAfter(b, sep) {
		if len(bytes.TrimSpace(f)) > 0 {
			frames = append(frames, f)
		}
	}
	return frames
}

// streamFrames answers with body written frame by frame, flushing after each so the client sees real chunking.
func streamFrames(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		for _, f := range splitFrames(body) {
			if _, err := w.Write(f); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

func streamFixture(t testing.TB, contentType, name string) http.HandlerFunc {
	return streamFrames(contentType, readFixture(t, name))
}

// status answers with code, body and optional header key/value pairs.
func status(code int, body string, kv ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// hangUp closes the connection without answering, a connection-level failure.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
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
