package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

// hostileStreamable serves mcptest over streamable HTTP, except that a tools/call of one of the hostile names
// is answered with an event stream that misbehaves: huge (one 8 MiB event), endless (keep-alive comments,
// never the answer) or trickle (one byte at a time, never a whole event).
func hostileStreamable(t *testing.T) *httptest.Server {
	h := mcptest.Handler(false)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				f := w.(http.Flusher)
				switch msg.Params.Name {
				case "huge":
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}}\n\n",
						msg.ID, strings.Repeat("x", 8<<20)) // past our 4 MiB, within the SDK's default 16 MiB
					return
				case "hang": // endless: keep-alives, never the answer
					w.Header().Set("Content-Type", "text/event-stream")
					for r.Context().Err() == nil {
						_, _ = io.WriteString(w, ": keep-alive\n\n")
						f.Flush()
						time.Sleep(10 * time.Millisecond)
					}
					return
				case "sleep": // trickle: one byte at a time of an event that never ends
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, "event: message\ndata: ")
					for r.Context().Err() == nil {
						_, _ = io.WriteString(w, "x")
						f.Flush()
						time.Sleep(20 * time.Millisecond)
					}
					return
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A streamable HTTP server's event stream cannot make a call hold the daemon: an 8 MiB event is refused, not
// buffered (the call fails at once, naming the bound), an endless stream of keep-alives and a byte-at-a-time trickle end at
// tool_timeout_secs with upstream's outcome-unknown error; the server is reconnected and serves the next call.
func TestHostileStreamableEventStream(t *testing.T) {
	srv := hostileStreamable(t)
	m := newManager(t, config.MCPServerConfig{Name: "h", Transport: config.MCPHTTP, URL: srv.URL, ToolTimeoutSecs: 1})
	for _, tc := range []struct{ tool, args, want string }{
		{"huge", `{"bytes":1}`, "exceeded 4194304 bytes"},
		{"hang", `{}`, "timed out after 1s"},
		{"sleep", `{"ms":1}`, "timed out after 1s"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			st := m.ForServers(ctxT(t), []string{"h"}, "")
			waitFor(t, m, "ready", func() bool { return statusOf(m, "h").State == StateReady })
			st = m.ForServers(ctxT(t), []string{"h"}, "")
			before := statusOf(m, "h").Restarts
			res := call(t, st, "h__"+tc.tool, tc.args)
			if !res.IsError || len(res.Output) > 8192 || !strings.Contains(res.Output, tc.want) {
				t.Fatalf("%s: error %v, %d bytes: %.300q", tc.tool, res.IsError, len(res.Output), res.Output)
			}
			waitFor(t, m, "the reconnect", func() bool { s := statusOf(m, "h"); return s.Restarts > before && s.State == StateReady })
			if res := call(t, m.ForServers(ctxT(t), []string{"h"}, ""), "h__echo", `{"text":"after"}`); res.Output != "echo: after" {
				t.Fatalf("after %s: %+v", tc.tool, res)
			}
		})
	}
}

// A legacy SSE server whose stream sends one event past the 4 MiB bound, or trickles an event that never
// ends, is not waited on forever nor buffered whole: the start fails within startup_timeout_secs (the error
// says why) and the server is retried with backoff.
func TestHostileSSEStream(t *testing.T) {
	for _, mode := range []string{"huge", "trickle"} {
		t.Run(mode, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				f := w.(http.Flusher)
				fmt.Fprintf(w, "event: endpoint\ndata: /message\n\n")
				f.Flush()
				if mode == "huge" {
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", strings.Repeat("x", 24<<20))
					f.Flush()
				} else {
					_, _ = io.WriteString(w, "event: message\ndata: ")
				}
				for r.Context().Err() == nil {
					_, _ = io.WriteString(w, "x")
					f.Flush()
					time.Sleep(20 * time.Millisecond)
				}
			}))
			t.Cleanup(srv.Close)
			m := newManager(t, config.MCPServerConfig{Name: "s", Transport: config.MCPSSE, URL: srv.URL, StartupTimeoutSecs: 2})
			_ = m.ForServers(ctxT(t), []string{"s"}, "")
			waitFor(t, m, "the failed start", func() bool { return statusOf(m, "s").State == StateBackoff })
			if e := statusOf(m, "s").LastError; e == "" || len(e) > 4096 {
				t.Fatalf("last error %d bytes: %.300q", len(e), e)
			}
		})
	}
}
