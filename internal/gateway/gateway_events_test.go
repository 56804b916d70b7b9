package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// streamClient is the client of the event streams (its own transport: each stream holds a connection).
var streamClient = &http.Client{Transport: &http.Transport{Proxy: nil}}

// openStream opens GET /api/events with auth and returns the response (the caller closes its body).
func openStream(t *testing.T, ctx context.Context, g *rpctest.Gateway, auth string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", g.Base+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	k, v, _ := strings.Cut(auth, ": ")
	req.Header.Set(k, v)
	req.Header.Set("Accept", "text/event-stream")
	res, err := streamClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// GET /api/events streams the runtime events as they happen, as SSE data lines; streams are bounded.
func TestDashboardEvents(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	t.Cleanup(streamClient.CloseIdleConnections)

	res := openStream(t, ctx, g, auth)
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("stream: %d %v", res.StatusCode, res.Header)
	}
	lines := bufio.NewScanner(res.Body)
	if !lines.Scan() || lines.Text() != ": connected" {
		t.Fatalf("first line %q", lines.Text())
	}
	g.Do("PUT", "/api/config/prop", map[string]any{"path": "gateway.pair_rate_limit_per_minute", "value": 20}, auth,
		"Content-Type: application/json").Want(t, 200)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "data: {") && strings.Contains(l, "config changed") {
			break
		}
	}
	if err := lines.Err(); err != nil || ctx.Err() != nil {
		t.Fatalf("no config event on the stream: %v %v", err, ctx.Err())
	}

	// At most 32 streams at once: the 33rd is 503, and a closed one frees its place.
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	for len(open) < 31 {
		r := openStream(t, ctx, g, auth)
		if r.StatusCode != 200 {
			t.Fatalf("stream %d: %d", len(open)+2, r.StatusCode)
		}
		open = append(open, r)
	}
	r := openStream(t, ctx, g, auth)
	r.Body.Close()
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("stream 33: %d, want 503", r.StatusCode)
	}
	res.Body.Close()
	for {
		r := openStream(t, ctx, g, auth)
		r.Body.Close()
		if r.StatusCode == 200 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("a closed stream never freed its place")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The daemon's shutdown ends an open stream (net/http would wait for it).
	last := openStream(t, ctx, g, auth)
	defer last.Body.Close()
	g.Do("POST", "/admin/shutdown", nil, auth).Want(t, 200)
	rest := bufio.NewScanner(last.Body)
	for rest.Scan() {
	}
	if ctx.Err() != nil {
		t.Fatal("the stream outlived the shutdown")
	}
}

// The stream names session and turn events as the dashboard listens for them (session_created,
// session_closed, agent_start, agent_end), and /api/events/history replays the same frames.
func TestDashboardSessionEvents(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // a hang guard only: a loaded -race run can take long
	defer cancel()
	t.Cleanup(streamClient.CloseIdleConnections)
	res := openStream(t, ctx, g, auth)
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	if !lines.Scan() || lines.Text() != ": connected" {
		t.Fatalf("first line %q", lines.Text())
	}

	w := rpctest.DialWS(t, d.GatewayURL(t), "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	sid, _ := w.Next()["session_id"].(string)
	w.Send(map[string]any{"type": "message", "content": "hello"})
	w.Until("done")
	g.Do("DELETE", "/api/sessions/"+sid, nil, auth).Want(t, 200)

	want := []string{"session_created", "agent_start", "agent_end", "session_closed"}
	var got []string
	for len(got) < len(want) && lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type      string         `json:"type"`
			Timestamp string         `json:"timestamp"`
			Zeroclaw  map[string]any `json:"zeroclaw"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("frame %s: %v", data, err)
		}
		if ev.Type == "" || ev.Timestamp == "" {
			t.Fatalf("frame without type or timestamp: %s", data)
		}
		if slices.Contains(want, ev.Type) {
			if key, _ := ev.Zeroclaw["session_key"].(string); !strings.HasSuffix(key, sid) {
				t.Errorf("%s names session %q, want %s", ev.Type, key, sid)
			}
			got = append(got, ev.Type)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("stream types %v, want %v (%v)", got, want, lines.Err())
	}

	var hist struct {
		Events []map[string]any `json:"events"`
	}
	r := g.Do("GET", "/api/events/history", nil, auth).Want(t, 200)
	if err := json.Unmarshal(r.Raw, &hist); err != nil || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("history: %v %s", err, r.Raw)
	}
	var types []string
	for _, e := range hist.Events {
		if typ, _ := e["type"].(string); slices.Contains(want, typ) {
			types = append(types, typ)
		}
	}
	if !slices.Equal(types, want) {
		t.Fatalf("history types %v, want %v", types, want)
	}

	// An ACP session is announced too.
	a := rpctest.DialWS(t, d.GatewayURL(t), "/acp", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth),
		Subprotocols: []string{"zeroclaw.acp.v1"}})
	a.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	a.Next()
	a.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"","mcpServers":[]}}`)
	created, _ := a.Next()["result"].(map[string]any)
	acpID, _ := created["sessionId"].(string)
	if acpID == "" {
		t.Fatalf("acp session/new: %v", created)
	}
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok && strings.Contains(data, `"type":"session_created"`) {
			if !strings.Contains(data, acpID) {
				t.Fatalf("session_created names another session: %s (want %s)", data, acpID)
			}
			break
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
}
