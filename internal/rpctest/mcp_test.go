package rpctest

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
	"github.com/zeroclaw-go/zeroclaw/internal/provider/providertest"
)

// everythingJS is the real npm server-everything (installed by `npm ci --prefix tests/mcp-servers`).
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

// mcpTOML grants agent "a" the stdio server "everything" (npm) and the HTTP server "web" (the Go SDK test
// server); agent "b" has no bundle.
func mcpTOML(t *testing.T, webURL string) string {
	return fmt.Sprintf(`
[agents.b]
model_provider = "echo.default"
risk_profile = "full"

[[mcp.servers]]
name = "everything"
command = "node"
args = [%q, "stdio"]

[[mcp.servers]]
name = "web"
transport = "http"
url = %q

[mcp_bundles.dev]
servers = ["everything", "web"]
`, everythingJS(t), webURL)
}

func withBundle(cfg string) string {
	return strings.Replace(cfg, "[agents.a]\n", "[agents.a]\nmcp_bundles = [\"dev\"]\n", 1)
}

// An agent turn in a native session calls a real MCP server's tool over stdio (npm server-everything) and
// over streamable HTTP; an agent with no bundle is refused the same tools (deny by default, zeroclaw#4848);
// the chat session/new exposes them, as zeroclaw#8193 needed.
func TestMCPToolsInNativeSession(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(web.Close)
	d := Start(t, WithConfig(withBundle(agentConfig(echoTOML, "echo.default", "full", mcpTOML(t, web.URL)))))
	c := dialRC(t, d, "")
	sa := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	res := toolCall(t, c, sa.SessionID, "everything__echo", `{"message":"hello over stdio"}`)
	if res.IsError || !strings.Contains(toolOut(res), "hello over stdio") {
		t.Fatalf("stdio MCP tool: %+v %q", res, toolOut(res))
	}
	res = toolCall(t, c, sa.SessionID, "web__echo", `{"text":"hello over http"}`)
	if res.IsError || toolOut(res) != "echo: hello over http" {
		t.Fatalf("http MCP tool: %+v %q", res, toolOut(res))
	}
	sb := c.newSession(api.SessionNewParams{AgentAlias: "b"})
	res = toolCall(t, c, sb.SessionID, "web__echo", `{"text":"x"}`)
	if !res.IsError || !strings.Contains(toolOut(res), "not offered") {
		t.Fatalf("ungranted agent: %+v %q", res, toolOut(res))
	}
}

// Under supervised, an MCP tool (medium risk by default) is asked about, with its name and arguments escaped
// in the approval request; a server's risk = "low" runs without asking.
func TestMCPToolApprovalUnderSupervised(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(web.Close)
	cfg := withBundle(agentConfig(echoTOML, "echo.default", "supervised", fmt.Sprintf(`
[[mcp.servers]]
name = "web"
transport = "http"
url = %q

[[mcp.servers]]
name = "safe"
transport = "http"
url = %q
risk = "low"

[mcp_bundles.dev]
servers = ["web", "safe"]
`, web.URL, web.URL)))
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, `{"approvals":true}`)
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	var asked []api.SessionUpdate
	tr := c.prompt(s.SessionID, "/tool web__echo {\"text\":\"\\u001b[31mred\"}", hooks{onUpdate: func(u api.SessionUpdate) {
		if u.Type == api.UpdateApprovalRequest {
			asked = append(asked, u)
			c.send(api.MethodSessionApprove, api.SessionApproveParams{SessionID: s.SessionID, RequestID: u.RequestID, Decision: api.DecisionAllowOnce})
		}
	}, onOther: func(frame) bool { return true }})
	if tr.err != nil || len(asked) != 1 || asked[0].ToolName != "web__echo" || asked[0].Risk != "medium" ||
		strings.ContainsRune(asked[0].ArgumentsSummary, 0x1b) {
		t.Fatalf("approval: err %v, asked %+v", tr.err, asked)
	}
	if out := only(tr.events, api.UpdateToolResult); len(out) != 1 || !strings.Contains(toolOut(out[0]), "echo: \x1b[31mred") {
		t.Fatalf("after approval: %+v", tr.events)
	}
	asked = nil
	tr = c.prompt(s.SessionID, `/tool safe__echo {"text":"low"}`, hooks{onUpdate: func(u api.SessionUpdate) {
		if u.Type == api.UpdateApprovalRequest {
			asked = append(asked, u)
		}
	}})
	if out := only(tr.events, api.UpdateToolResult); len(asked) != 0 || len(out) != 1 || toolOut(out[0]) != "echo: low" {
		t.Fatalf("risk=low: asked %v, events %+v", asked, tr.events)
	}
}

// A cron agent job's turn offers the agent's MCP tools to the model and runs the one it calls: the model's
// second request carries the MCP tool's output.
func TestMCPToolInCronJob(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(web.Close)
	model := newLLM(t, stream(ctSSE, openAIToolCall("web__echo", `{"text":"from cron"}`)), stream(ctSSE, openAIText(1, 1, "done")))
	cfg := withBundle(agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "full", fmt.Sprintf(`
[[mcp.servers]]
name = "web"
transport = "http"
url = %q

[mcp_bundles.dev]
servers = ["web"]
`, web.URL)))
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	var job api.CronJob
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "a", "schedule": "0 9 * * *", "prompt": "use the echo tool"}, &job)
	var trig api.CronTriggerResult
	c.mustCall(api.MethodCronTrigger, map[string]any{"id": job.ID}, &trig)
	if !trig.Success || trig.Output != "done" {
		t.Fatalf("cron/trigger: %+v", trig)
	}
	_, bodies := model.requests()
	if len(bodies) != 2 {
		t.Fatalf("%d model requests", len(bodies))
	}
	if names := toolNames(t, bodies[0]); !slices.Contains(names, "web__echo") || !slices.Contains(names, "web__add_tool") {
		t.Fatalf("the cron turn offered %v", names)
	}
	if !strings.Contains(string(bodies[1]), "echo: from cron") {
		t.Fatalf("the MCP result did not reach the model: %s", bodies[1])
	}
}

var _ = providertest.SSE

// agents/status shows each agent's granted MCP servers and their state (upstream had none, zeroclaw#8703);
// GET /api/tools?agent= lists that agent's MCP tools and not another's (zeroclaw#8302); doctor checks the
// servers (a command that cannot be found, a server no agent is granted).
func TestMCPStatusToolsListAndDoctor(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(web.Close)
	cfg := strings.Replace(rpcGatewayMCP(web.URL), "[agents.default]\n", "[agents.default]\nmcp_bundles = [\"dev\"]\n", 1)
	d, g, code := StartGateway(t, cfg)
	auth := PairOnce(t, g, code)
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "default"})
	if res := toolCall(t, c, s.SessionID, "web__echo", `{"text":"x"}`); toolOut(res) != "echo: x" {
		t.Fatalf("web__echo: %q", toolOut(res))
	}
	// /ws/chat: the same agent's turn gets the same MCP tool.
	w := DialWS(t, d.GatewayURL(t), "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: BearerHeader(auth)})
	wsStart := w.Next()
	wsSID, _ := wsStart["session_id"].(string)
	w.Send(map[string]any{"type": "message", "content": `/tool web__echo {"text":"over ws"}`})
	if seen, _ := w.Until("done"); !slices.Contains(seen, "tool_result") {
		t.Fatalf("ws frames %v", seen)
	}
	if r := g.Do("GET", "/api/sessions/"+wsSID+"/messages", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), "echo: over ws") {
		t.Fatalf("ws session messages %s", r.Raw)
	}
	var st api.AgentsStatusResult
	c.mustCall(api.MethodAgentsStatus, map[string]any{}, &st)
	for _, a := range st.Agents {
		switch a.Alias {
		case "default":
			if len(a.MCPServers) != 2 || a.MCPServers[0].Name != "web" || a.MCPServers[0].State != "ready" || a.MCPServers[0].Tools < 5 ||
				a.MCPServers[1].Name != "ghost" || a.MCPServers[1].State == "ready" {
				t.Fatalf("default's MCP servers: %+v", a.MCPServers)
			}
		case "other":
			if len(a.MCPServers) != 0 {
				t.Fatalf("other is granted nothing: %+v", a.MCPServers)
			}
		}
	}
	tools := string(g.Do("GET", "/api/tools?agent=default", nil, auth).Want(t, 200).Raw)
	if !strings.Contains(tools, `"name":"web__echo"`) || !strings.Contains(tools, `"name":"shell"`) || !strings.Contains(tools, `"mcp_servers":[{"name":"web"`) {
		t.Fatalf("tools of default: %.400s", tools)
	}
	if other := string(g.Do("GET", "/api/tools?agent=other", nil, auth).Want(t, 200).Raw); strings.Contains(other, "web__") {
		t.Fatalf("other sees default's MCP tools: %.300s", other)
	}
	var doc api.DoctorResult
	c.mustCall(api.MethodDoctorRun, map[string]any{"offline": true}, &doc)
	var found []string
	for _, r := range doc.Results {
		if r.Category == "mcp" {
			found = append(found, r.Severity+":"+r.ID+":"+r.Message)
		}
	}
	joined := strings.Join(found, "\n")
	for _, want := range []string{`error:mcp-command:MCP server ghost: command "/nonexistent/mcp-server" not found`,
		"warn:mcp-ungranted:MCP server lonely is granted to no agent", "ok:mcp-state:MCP server web is ready"} {
		if !strings.Contains(joined, want) {
			t.Errorf("doctor lacks %q:\n%s", want, joined)
		}
	}
}

func rpcGatewayMCP(webURL string) string {
	return GatewayConfig + fmt.Sprintf(`
[agents.other]
model_provider = "echo.default"
risk_profile = "supervised"

[[mcp.servers]]
name = "web"
transport = "http"
url = %q
risk = "low"

[[mcp.servers]]
name = "ghost"
command = "/nonexistent/mcp-server"

[[mcp.servers]]
name = "lonely"
transport = "http"
url = %q

[mcp_bundles.dev]
servers = ["web", "ghost"]
`, webURL, webURL)
}

// A config reload applies [[mcp.servers]] to the running daemon: a new server's tools reach the next turn, a
// removed server is stopped (its tools gone), without a restart.
func TestMCPConfigReload(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(web.Close)
	base := agentConfig(echoTOML, "echo.default", "full", "")
	d := Start(t, WithConfig(base))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	if res := toolCall(t, c, s.SessionID, "web__echo", `{"text":"x"}`); !res.IsError {
		t.Fatalf("before the reload: %+v", res)
	}
	path := filepath.Join(d.ConfigDir, "config.toml")
	withServer := withBundle(agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf("\n[[mcp.servers]]\nname = \"web\"\ntransport = \"http\"\nurl = %q\n\n[mcp_bundles.dev]\nservers = [\"web\"]\n", web.URL)))
	for _, step := range []struct {
		cfg     string
		wantErr bool
	}{{withServer, false}, {base, true}} {
		if err := os.WriteFile(path, []byte(step.cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		c.mustCall(api.MethodConfigReload, map[string]any{}, nil)
		var res api.SessionUpdate
		waitFor(t, "the reload to apply", func() bool {
			res = toolCall(t, c, s.SessionID, "web__echo", `{"text":"after reload"}`)
			return res.IsError == step.wantErr
		})
		if !step.wantErr && toolOut(res) != "echo: after reload" {
			t.Fatalf("after adding the server: %q", toolOut(res))
		}
	}
}

// The agent's runtime profile's tool_filter_groups choose a turn's MCP tools from its user message: a dynamic
// group's tools are offered only in a turn whose prompt holds a keyword, an always group's in every turn.
func TestMCPToolFilterGroupsInSession(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(mcptest.Handler(false))
	t.Cleanup(web.Close)
	cfg := withBundle(agentConfig(echoTOML, "echo.default", "full", mcpTOML(t, web.URL)+`
[runtime_profiles.focused]

[[runtime_profiles.focused.tool_filter_groups]]
mode = "dynamic"
tools = ["web__*"]
keywords = ["Browse"]

[[runtime_profiles.focused.tool_filter_groups]]
mode = "always"
tools = ["everything__echo"]
`))
	cfg = strings.Replace(cfg, "[agents.a]\n", "[agents.a]\nruntime_profile = \"focused\"\n", 1)
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	if res := toolCall(t, c, s.SessionID, "web__echo", `{"text":"plain"}`); !res.IsError || !strings.Contains(toolOut(res), "not offered") {
		t.Fatalf("a dynamic tool without its keyword: %+v %q", res, toolOut(res))
	}
	if res := toolCall(t, c, s.SessionID, "web__echo", `{"text":"browse"}`); res.IsError || toolOut(res) != "echo: browse" {
		t.Fatalf("a dynamic tool with its keyword: %+v %q", res, toolOut(res))
	}
	if res := toolCall(t, c, s.SessionID, "everything__echo", `{"message":"always"}`); res.IsError || !strings.Contains(toolOut(res), "always") {
		t.Fatalf("the always tool: %+v %q", res, toolOut(res))
	}
	if res := toolCall(t, c, s.SessionID, "everything__get-sum", `{"a":1,"b":2}`); !res.IsError || !strings.Contains(toolOut(res), "not offered") {
		t.Fatalf("a tool no group covers: %+v %q", res, toolOut(res))
	}
}
