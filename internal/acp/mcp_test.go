package acp_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		{[]map[string]any{{"type": "http", "name": "h", "url": "http://x/"}}, "transport \"http\" is not supported"},
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
