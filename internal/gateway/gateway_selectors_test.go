package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// A device paired with a profile whose allowed_agents lists only writer: every gateway surface refuses it the
// default agent with a specific error (403 before an upgrade, -32012 inside ACP), and serves it writer.
func TestAllowedAgentsOverGateway(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+`
[gateway]
webhook_secret = "s3cret"

[agents.writer]
model_provider = "echo.default"
risk_profile = "supervised"

[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read"]
allowed_agents = ["writer"]
`)
	owner := rpctest.PairOnce(t, g, code)
	bot := rpctest.PairWithProfile(t, d, g, "bot")
	base := d.GatewayURL(t)
	secret := "X-Webhook-Secret: s3cret"
	msg := map[string]any{"message": "hello"}

	for _, p := range []string{"/ws/chat?agent=default", "/acp?agent=default"} {
		if s := dialStatus(t, base, p, rpctest.BearerHeader(bot)); s != 403 {
			t.Errorf("%s as bot: %d, want 403", p, s)
		}
	}
	r := g.Do("POST", "/webhook?agent=default", msg, bot, secret).Want(t, 403)
	if r.Body["code"] != float64(-32012) || !strings.Contains(r.Body["error"].(string), "allowed_agents") {
		t.Errorf("webhook naming default: %s", r.Raw)
	}
	// /acp with no ?agent: session/new naming the default agent is -32012; naming writer works.
	a := rpctest.DialWS(t, base, "/acp", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(bot),
		Subprotocols: []string{"zeroclaw.acp.v1"}})
	a.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	a.Next()
	a.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"mcpServers":[],"agent":"default"}}`)
	if f := a.Next(); f["error"] == nil || f["error"].(map[string]any)["code"] != float64(-32012) {
		t.Errorf("ACP session/new of default: %v", f)
	}
	a.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"mcpServers":[],"agent":"writer"}}`)
	if f := a.Next(); f["result"] == nil {
		t.Errorf("ACP session/new of writer: %v", f)
	}

	// writer is served; the owner is not restricted.
	w := rpctest.DialWS(t, base, "/ws/chat?agent=writer", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(bot),
		Subprotocols: []string{"zeroclaw.v1"}})
	if f := w.Next(); f["type"] != "session_start" {
		t.Fatalf("/ws/chat?agent=writer as bot: %v", f)
	}
	g.Do("POST", "/webhook?agent=writer", msg, bot, secret).Want(t, 200)
	g.Do("POST", "/webhook?agent=default", msg, owner, secret).Want(t, 200)
}

// A device restricted to agent writer with logs:read reads only writer's events from the gateway: the event
// history and /api/logs leave the default agent's turns (and unattributed daemon events) out.
func TestAllowedAgentsHoldOnEventsOverGateway(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+`
[gateway]
webhook_secret = "s3cret"

[agents.writer]
model_provider = "echo.default"
risk_profile = "supervised"

[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "logs:read"]
allowed_agents = ["writer"]

[observability]
log_persistence = "full"
`)
	owner := rpctest.PairOnce(t, g, code)
	bot := rpctest.PairWithProfile(t, d, g, "bot")
	secret := "X-Webhook-Secret: s3cret"
	g.Do("POST", "/webhook?agent=default", map[string]any{"message": "for default"}, owner, secret).Want(t, 200)
	g.Do("POST", "/webhook?agent=writer", map[string]any{"message": "for writer"}, bot, secret).Want(t, 200)

	agentsIn := func(who, path, key string) map[string]int {
		t.Helper()
		var body map[string]json.RawMessage
		var events []map[string]any
		r := g.Do("GET", path, nil, who).Want(t, 200)
		if err := json.Unmarshal(r.Raw, &body); err != nil || json.Unmarshal(body[key], &events) != nil {
			t.Fatalf("%s: %v %s", path, err, r.Raw)
		}
		seen := map[string]int{}
		for _, e := range events {
			zc, _ := e["zeroclaw"].(map[string]any)
			agent, _ := zc["agent_alias"].(string)
			seen[agent]++
		}
		return seen
	}
	for _, route := range []struct{ path, key string }{{"/api/events/history", "events"}, {"/api/logs?limit=500", "events"}} {
		all := agentsIn(owner, route.path, route.key)
		if all["default"] == 0 || all["writer"] == 0 {
			t.Fatalf("%s as owner: agents %v, want both agents' events", route.path, all)
		}
		mine := agentsIn(bot, route.path, route.key)
		if mine["writer"] != all["writer"] || len(mine) != 1 {
			t.Errorf("%s as bot: agents %v, want only writer's %d events", route.path, mine, all["writer"])
		}
	}
}
