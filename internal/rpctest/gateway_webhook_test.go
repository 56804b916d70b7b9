package rpctest

import (
	"strings"
	"testing"
)

// POST /webhook runs a turn: token and secret required, unknown agent 400, idempotency keys, the session
// header's shape, and the per-client rate.
func TestGatewayWebhook(t *testing.T) {
	cfg := gwBaseConfig + "\n[gateway]\nwebhook_secret = \"s3cret\"\nwebhook_rate_limit_per_minute = 6\n"
	_, g, code := startGateway(t, cfg)
	auth := pairOnce(t, g, code)
	secret := "X-Webhook-Secret: s3cret"
	msg := map[string]any{"message": "ping from a webhook"}

	g.do("POST", "/webhook", msg, secret).want(t, 401)                                                             // 1: no token
	g.do("POST", "/webhook", msg, auth, "X-Webhook-Secret: nope").want(t, 401)                                     // 2: wrong secret
	r := g.do("POST", "/webhook", msg, auth, secret, "X-Idempotency-Key: k1", "X-Session-Id: hook.1").want(t, 200) // 3
	if !strings.Contains(r.body["response"].(string), "ping from a webhook") || r.body["model"] != "echo" || r.body["session_id"] != "hook.1" {
		t.Fatalf("webhook answer %s", r.raw)
	}
	r = g.do("POST", "/webhook", msg, auth, secret, "X-Idempotency-Key: k1").want(t, 200) // 4
	if r.body["status"] != "duplicate" || r.body["idempotent"] != true {
		t.Fatalf("duplicate %s", r.raw)
	}
	g.do("POST", "/webhook?agent=ghost", msg, auth, secret).want(t, 400)              // 5
	g.do("POST", "/webhook", msg, auth, secret, "X-Session-Id: bad id!").want(t, 400) // 6
	r = g.do("POST", "/webhook", msg, auth, secret).want(t, 429)                      // 7: over 6 a minute
	if r.body["retry_after"] != float64(60) {
		t.Fatalf("rate body %s", r.raw)
	}
	// The turn is in the session it named, owned by the device.
	m := g.do("GET", "/api/sessions/hook.1/messages", nil, auth).want(t, 200)
	if !strings.Contains(string(m.raw), "ping from a webhook") {
		t.Fatalf("messages of the webhook session: %s", m.raw)
	}
}
