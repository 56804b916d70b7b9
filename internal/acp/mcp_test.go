package acp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

func everythingJS(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../tests/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%v: run `npm ci --prefix tests/mcp-servers` (.ci/run does)", err)
	}
	return p
}

// mcpConfig is agent "a" (full) on the fake backend, granted an HTTP MCP server "own"; acp_enable_mcp as given.
func mcpConfig(uri, ownURL string, acpEnable bool) string {
	return fmt.Sprintf(`schema_version = 3

[providers.models.openai.fake]
uri = "%s"
model = "m"
api_key = "sk-test"
timeout_secs = 60

[agents.a]
model_provider = "openai.fake"
risk_profile = "full"
mcp_bundles = ["own"]
acp_enable_mcp = %v

[risk_profiles.full]
level = "full"

[[mcp.servers]]
name = "own"
transport = "http"
url = "%s"

[mcp_bundles.own]
servers = ["own"]
`, uri, acpEnable, ownURL)
}

// liveChildren counts the live (non-zombie) child processes of this test process, the in-process daemon's.
func liveChildren(t *testing.T) (n int) {
	me := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
		if len(f) > 2 && f[1] == me && f[0] != "Z" {
			n++
		}
	}
	return n
}

// The editor's session/new mcpServers are honoured for that session (ACP): the editor's stdio server (npm
// server-everything) is started, its tool is offered and called in a turn, and it is stopped (reaped) when
// the session closes. The agent's own granted servers reach ACP sessions only with acp_enable_mcp (upstream).
func TestACPEditorMCPServers(t *testing.T) {
	own := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(own.Close) // after the daemon stops (cleanups run last-in first-out)
	f := newLLM(t, toolCall("c1", "ed__echo", `{"message":"from the editor"}`), answer("done"))
	d := rpctest.Start(t, rpctest.WithConfig(mcpConfig(f.URL, own.URL, false)))
	c := dial(t, d)
	before := liveChildren(t)
	sid, _ := c.newSession(map[string]any{"mcpServers": []map[string]any{
		{"name": "ed", "command": "node", "args": []string{everythingJS(t), "stdio"}, "env": []map[string]string{{"name": "X_TEST", "value": "1"}}},
	}})
	ex := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "call the editor's echo"}, nil)
	if got := stopReason(t, ex); got != "end_turn" {
		t.Fatalf("stopReason = %s", got)
	}
	bodies := f.requests()
	if len(bodies) != 2 {
		t.Fatalf("%d model requests", len(bodies))
	}
	if !strings.Contains(bodies[0], `"ed__echo"`) || strings.Contains(bodies[0], `"own__echo"`) {
		t.Fatalf("first request's tools: editor's expected, the agent's own not (acp_enable_mcp=false): %s", bodies[0])
	}
	if !strings.Contains(bodies[1], "from the editor") {
		t.Fatalf("the editor server's result did not reach the model: %s", bodies[1])
	}
	if liveChildren(t) <= before {
		t.Fatal("no editor server child")
	}
	c.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	deadline := time.Now().Add(20 * time.Second)
	for liveChildren(t) > before {
		if time.Now().After(deadline) {
			t.Fatalf("the editor's server outlived its session: %d children, %d before", liveChildren(t), before)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Bad entries are refused with a specific invalid-params error.
	for _, bad := range []struct {
		servers any
		want    string
	}{
		{[]map[string]any{{"type": "ws", "name": "h", "url": "http://x/"}}, "unknown type \"ws\""},
		{[]map[string]any{{"type": "http", "name": "h", "url": "file:///etc/passwd"}}, "url must be an http or https URL"},
		{[]map[string]any{{"type": "sse", "name": "h"}}, "url must be an http or https URL"},
		{[]map[string]any{{"type": "http", "name": "h", "url": "http://x/", "headers": []map[string]string{{"name": "X-A", "value": "a\r\nInjected: 1"}}}}, "invalid or oversized header"},
		{[]map[string]any{{"type": "http", "name": "h", "url": "http://x/", "headers": []map[string]string{{"name": "Bad Name", "value": "v"}}}}, "invalid or oversized header"},
		{[]map[string]any{{"type": "http", "name": "h", "url": "http://x/", "headers": []map[string]string{{"name": "X-A", "value": strings.Repeat("v", 9000)}}}}, "invalid or oversized header"},
		{[]map[string]any{{"name": "a__b", "command": "x"}}, "without \"__\""},
		{[]map[string]any{{"name": "a"}}, "command is required"},
		{[]map[string]any{{"name": "a", "command": "x"}, {"name": "A", "command": "y"}}, "duplicate name"},
		{"nope", "must be an array"},
	} {
		wantCode(t, c.call("session/new", map[string]any{"mcpServers": bad.servers}, nil), -32602, bad.want)
	}
}

// With acp_enable_mcp the agent's own granted servers are offered in its ACP sessions too.
func TestACPEnableMCPGivesTheAgentsServers(t *testing.T) {
	own := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(own.Close) // after the daemon stops (cleanups run last-in first-out)
	f := newLLM(t, toolCall("c1", "own__echo", `{"text":"own"}`), answer("done"))
	d := rpctest.Start(t, rpctest.WithConfig(mcpConfig(f.URL, own.URL, true)))
	c := dial(t, d)
	sid, _ := c.newSession(nil)
	ex := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "call own"}, nil)
	if got := stopReason(t, ex); got != "end_turn" {
		t.Fatalf("stopReason = %s", got)
	}
	if bodies := f.requests(); len(bodies) != 2 || !strings.Contains(bodies[1], "echo: own") {
		t.Fatalf("requests: %q", bodies)
	}
}

// The editor's http and sse servers (ACP McpServerHttp / McpServerSse, with headers) are honoured for that
// session only: both are offered and called in a turn, every request carries the editor's headers, another
// session of the same agent does not get them, and initialize advertises mcpCapabilities {http, sse}.
func TestACPEditorHTTPAndSSEServers(t *testing.T) {
	var mu sync.Mutex
	auth := map[string][]string{}
	record := func(tag string, h http.Handler) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth[tag] = append(auth[tag], r.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	httpSrv, sseSrv := record("http", mcptest.Handler(false)), record("sse", mcptest.Handler(true))
	own := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(own.Close)
	f := newLLM(t, toolCall("c1", "edh__echo", `{"text":"via http"}`), toolCall("c2", "eds__echo", `{"text":"via sse"}`), answer("done"),
		answer("second session"))
	d := rpctest.Start(t, rpctest.WithConfig(mcpConfig(f.URL, own.URL, false)))
	c := dial(t, d)
	var init map[string]any
	c.mustCall("initialize", map[string]any{"protocolVersion": 1}, &init)
	if caps, _ := init["agentCapabilities"].(map[string]any)["mcpCapabilities"].(map[string]any); caps["http"] != true || caps["sse"] != true {
		t.Fatalf("mcpCapabilities %v", caps)
	}
	hdr := []map[string]string{{"name": "Authorization", "value": "Bearer editor-token-123456"}}
	sid, _ := c.newSession(map[string]any{"mcpServers": []map[string]any{
		{"type": "http", "name": "edh", "url": httpSrv.URL, "headers": hdr},
		{"type": "sse", "name": "eds", "url": sseSrv.URL, "headers": hdr},
	}})
	ex := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "use both"}, nil)
	if got := stopReason(t, ex); got != "end_turn" {
		t.Fatalf("stopReason = %s", got)
	}
	bodies := f.requests()
	if len(bodies) != 3 || !strings.Contains(bodies[0], `"edh__echo"`) || !strings.Contains(bodies[0], `"eds__echo"`) {
		t.Fatalf("the editor's http and sse tools were not offered: %d requests, %.300s", len(bodies), bodies)
	}
	if !strings.Contains(bodies[1], "echo: via http") || !strings.Contains(bodies[2], "echo: via sse") {
		t.Fatalf("results did not reach the model:\n%s\n%s", bodies[1], bodies[2])
	}
	mu.Lock()
	for tag, got := range auth {
		for _, a := range got {
			if a != "Bearer editor-token-123456" {
				t.Errorf("%s server got Authorization %q", tag, a)
			}
		}
	}
	if len(auth["http"]) == 0 || len(auth["sse"]) == 0 {
		t.Errorf("requests: %v", auth)
	}
	mu.Unlock()
	// Another session of the same agent: the editor's servers are that session's only.
	sid2, _ := c.newSession(map[string]any{})
	if got := stopReason(t, c.call("session/prompt", map[string]any{"sessionId": sid2, "prompt": "hi"}, nil)); got != "end_turn" {
		t.Fatalf("second session: %s", got)
	}
	if last := f.requests()[3]; strings.Contains(last, "edh__") || strings.Contains(last, "eds__") {
		t.Fatalf("another session got the editor's servers: %.300s", last)
	}
}
