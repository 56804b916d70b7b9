// Package providertest fakes model backends for tests: an httptest server that records every request and
// answers in a provider family's real wire format (SSE for OpenAI and Anthropic, NDJSON for Ollama), written
// frame by frame so clients see real chunking. It is imported only by tests.
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Content types of the streamed wire formats.
const (
	SSE    = "text/event-stream"
	NDJSON = "application/x-ndjson"
)

// Request is one request a Backend received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Backend is an httptest server that records every request and answers request i with responders[i] (the
// last responder repeats). It is closed when the test ends.
type Backend struct {
	*httptest.Server
	mu         sync.Mutex // mu guards the fields below
	reqs       []Request
	responders []http.HandlerFunc
}

// NewBackend starts a Backend; it needs at least one responder.
func NewBackend(t testing.TB, responders ...http.HandlerFunc) *Backend {
	t.Helper()
	if len(responders) == 0 {
		t.Fatal("providertest: a backend needs a responder")
	}
	f := &Backend{responders: responders}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		h := f.responders[min(n, len(f.responders)-1)]
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// Requests returns the requests received so far, in order.
func (f *Backend) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// Fixture reads a recorded stream from internal/provider/testdata, wherever the calling test runs.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("providertest: cannot locate the fixtures")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// Frames cuts a stream into its wire frames: SSE events (blank-line separated) or NDJSON lines.
func Frames(b []byte) [][]byte {
	sep := []byte("\n\n")
	if !bytes.Contains(b, sep) {
		sep = []byte("\n")
	}
	var out [][]byte
	for _, f := range bytes.SplitAfter(b, sep) {
		if len(bytes.TrimSpace(f)) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// Stream answers with body written frame by frame, flushed after each.
func Stream(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		for _, f := range Frames(body) {
			if _, err := w.Write(f); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// OpenAISSE renders JSON values as SSE data events, OpenAI style, ending with [DONE].
func OpenAISSE(chunks ...string) []byte {
	var b bytes.Buffer
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// OpenAIText is a streamed OpenAI answer made of the given text deltas, a stop chunk and a usage chunk of in
// prompt and out completion tokens.
func OpenAIText(in, out int, deltas ...string) []byte {
	var chunks []string
	for _, d := range deltas {
		q, _ := json.Marshal(d)
		chunks = append(chunks, `{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"content":`+string(q)+`},"finish_reason":null}]}`)
	}
	chunks = append(chunks, `{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunks = append(chunks, fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out))
	return OpenAISSE(chunks...)
}

// Status answers with code, body and optional header key/value pairs.
func Status(code int, body string, kv ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// HangUp closes the connection without answering, a connection-level failure.
func HangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}
