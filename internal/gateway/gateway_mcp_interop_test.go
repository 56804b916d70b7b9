package gateway_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// One daemon's agent uses another daemon's /mcp through our MCP client ([[mcp.servers]] over streamable HTTP,
// the paired token in its headers): what the agent's tool call stores is in the other daemon's memory, and a
// server paired with a reader token refuses the store, which the turn reports as the tool's error.
func TestMCPDaemonUsesAnotherDaemonsServer(t *testing.T) {
	t.Parallel()
	db, gb, code := rpctest.StartGateway(t, mcpConfig)
	owner := rpctest.PairOnce(t, gb, code)
	reader := rpctest.PairWithProfile(t, db, gb, "reader")
	cfg := fmt.Sprintf(`schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "full"
mcp_bundles = ["other"]

[risk_profiles.full]
level = "full"

[mcp]
enabled = true

[[mcp.servers]]
name = "zcb"
transport = "http"
url = %q
headers = { Authorization = %q }

[[mcp.servers]]
name = "zcr"
transport = "http"
url = %q
headers = { Authorization = %q }

[mcp_bundles.other]
servers = ["zcb", "zcr"]
`, gb.Base+"/mcp", strings.TrimPrefix(owner, "Authorization: "), gb.Base+"/mcp", strings.TrimPrefix(reader, "Authorization: "))
	da := rpctest.Start(t, rpctest.WithConfig(cfg))
	rc := dialRC(t, da, "")
	s := rc.newSession(api.SessionNewParams{AgentAlias: "default"})
	tr := rc.prompt(s.SessionID, `/tool zcb__memory_store {"key":"relay","content":"stored by the other daemon's agent","agent":"default"}`, hooks{})
	if tr.err != nil {
		t.Fatalf("prompt: %v", tr.err)
	}
	var result string
	for _, e := range tr.events {
		result += fmt.Sprintf("%+v\n", e)
	}
	if l := gb.Do("GET", "/api/memory?agent=default", nil, owner).Want(t, 200); !strings.Contains(string(l.Raw), "stored by the other daemon's agent") {
		t.Fatalf("B's memory after A's tool call: %s\nA's turn:\n%s", l.Raw, result)
	}
	tr = rc.prompt(s.SessionID, `/tool zcr__memory_store {"key":"r","content":"refused","agent":"default"}`, hooks{})
	said, refusedCall := "", false
	for _, e := range tr.events {
		switch e.Type {
		case "agent_message_chunk":
			said += e.Text
		case "tool_result":
			refusedCall = refusedCall || (e.Name == "zcr__memory_store" && e.IsError)
		}
	}
	if !refusedCall || !strings.Contains(said, "Forbidden: missing grant memory:write") {
		t.Fatalf("the reader server's refusal is not in A's turn: error result %v, said %q", refusedCall, said)
	}
	if l := gb.Do("GET", "/api/memory?agent=default", nil, owner).Want(t, 200); strings.Contains(string(l.Raw), `"refused"`) {
		t.Fatalf("the refused store stored: %s", l.Raw)
	}
}
