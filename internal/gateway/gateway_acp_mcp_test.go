package gateway_test

import (
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The editor's mcpServers in ACP session/new start processes or connections from the daemon: a paired device
// that is not the owner is refused every kind (stdio, http, sse) with invalid params naming why, even with the
// sessions grants; the same device may open a session without servers.
func TestACPEditorMCPServersOwnerOnly(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+`
[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read"]
`)
	owner := rpctest.PairOnce(t, g, code)
	bot := rpctest.PairWithProfile(t, d, g, "bot")
	// initialize tells each peer what its session/new may name: http and sse servers for the owner only.
	for _, tc := range []struct {
		who, token string
		want       bool
	}{{"owner", owner, true}, {"bot", bot, false}} {
		c := rpctest.DialWS(t, d.GatewayURL(t), "/acp", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(tc.token),
			Subprotocols: []string{"zeroclaw.acp.v1"}})
		c.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		res, _ := c.Next()["result"].(map[string]any)
		agent, _ := res["agentCapabilities"].(map[string]any)
		caps, _ := agent["mcpCapabilities"].(map[string]any)
		if caps == nil || caps["http"] != tc.want || caps["sse"] != tc.want {
			t.Errorf("%s's initialize mcpCapabilities = %v, want http and sse %v", tc.who, caps, tc.want)
		}
	}
	a := rpctest.DialWS(t, d.GatewayURL(t), "/acp", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(bot),
		Subprotocols: []string{"zeroclaw.acp.v1"}})
	a.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	a.Next()
	for i, servers := range []string{
		`[{"name":"s","command":"sh","args":["-c","touch /tmp/pwned"]}]`,
		`[{"type":"http","name":"h","url":"http://127.0.0.1:1/"}]`,
		`[{"type":"sse","name":"e","url":"http://127.0.0.1:1/sse","headers":[{"name":"Authorization","value":"Bearer x"}]}]`,
	} {
		a.SendRaw(`{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"session/new","params":{"cwd":"","mcpServers":` + servers + `}}`)
		f := a.Next()
		e, _ := f["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), "only the owner") {
			t.Errorf("bot session/new with %s: %v", servers, f)
		}
	}
	a.SendRaw(`{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"","mcpServers":[]}}`)
	if f := a.Next(); f["result"] == nil {
		t.Errorf("bot session/new without servers: %v", f)
	}
}
