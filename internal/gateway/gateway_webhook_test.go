package gateway_test

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// POST /webhook runs a turn: token and secret required, unknown agent 400, idempotency keys, the session
// header's shape, and the per-client rate.
func TestGatewayWebhook(t *testing.T) {
	t.Parallel()
	cfg := rpctest.GatewayConfig + "\n[gateway]\nwebhook_secret = \"s3cret\"\nwebhook_rate_limit_per_minute = 6\n"
	_, g, code := rpctest.StartGateway(t, cfg)
	auth := rpctest.PairOnce(t, g, code)
	secret := "X-Webhook-Secret: s3cret"
	msg := map[string]any{"message": "ping from a webhook"}

	g.Do("POST", "/webhook", msg, secret).Want(t, 401)                                                             // 1: no token
	g.Do("POST", "/webhook", msg, auth, "X-Webhook-Secret: nope").Want(t, 401)                                     // 2: wrong secret
	r := g.Do("POST", "/webhook", msg, auth, secret, "X-Idempotency-Key: k1", "X-Session-Id: hook.1").Want(t, 200) // 3
	if !strings.Contains(r.Body["response"].(string), "ping from a webhook") || r.Body["model"] != "echo" || r.Body["session_id"] != "hook.1" {
		t.Fatalf("webhook answer %s", r.Raw)
	}
	r = g.Do("POST", "/webhook", msg, auth, secret, "X-Idempotency-Key: k1").Want(t, 200) // 4
	if r.Body["status"] != "duplicate" || r.Body["idempotent"] != true {
		t.Fatalf("duplicate %s", r.Raw)
	}
	g.Do("POST", "/webhook?agent=ghost", msg, auth, secret).Want(t, 400)              // 5
	g.Do("POST", "/webhook", msg, auth, secret, "X-Session-Id: bad id!").Want(t, 400) // 6
	r = g.Do("POST", "/webhook", msg, auth, secret).Want(t, 429)                      // 7: over 6 a minute
	if r.Body["retry_after"] != float64(60) {
		t.Fatalf("rate body %s", r.Raw)
	}
	// The turn is in the session it named, owned by the device.
	m := g.Do("GET", "/api/sessions/hook.1/messages", nil, auth).Want(t, 200)
	if !strings.Contains(string(m.Raw), "ping from a webhook") {
		t.Fatalf("messages of the webhook session: %s", m.Raw)
	}
}
