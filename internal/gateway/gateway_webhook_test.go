package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// A webhook turn whose provider fails is 502 with upstream's "LLM request failed" and the turn's error as
// detail (never the provider's key), not a 500 that cannot be told from our own failure.
func TestGatewayWebhookProviderFailureIs502(t *testing.T) {
	t.Parallel()
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"model m does not exist","type":"invalid_request_error"}}`)
	}))
	t.Cleanup(llm.Close)
	cfg := rpctest.GatewayConfig + fmt.Sprintf(`
[providers.models.openai.broken]
uri = %q
model = "m"
api_key = "sk-webhook-secret-key"

[agents.broken]
model_provider = "openai.broken"
risk_profile = "supervised"
`, llm.URL)
	_, g, code := rpctest.StartGateway(t, cfg)
	auth := rpctest.PairOnce(t, g, code)
	r := g.Do("POST", "/webhook?agent=broken", map[string]any{"message": "hi"}, auth, "X-Session-Id: hook.broken").Want(t, 502)
	detail, _ := r.Body["detail"].(string)
	if r.Body["error"] != "LLM request failed" || !strings.Contains(detail, "does not exist") || r.Body["session_id"] != "hook.broken" {
		t.Fatalf("502 body %s", r.Raw)
	}
	if strings.Contains(string(r.Raw), "sk-webhook-secret-key") {
		t.Fatalf("the provider's key is in the answer: %s", r.Raw)
	}
	// A turn that cannot start for a reason of the request is 400 with its JSON-RPC code (it was a 500
	// "LLM request failed"): with two agents and none named, the session layer asks for one.
	r = g.Do("POST", "/webhook", map[string]any{"message": "hi"}, auth).Want(t, 400)
	if r.Body["code"] != float64(-32602) || !strings.Contains(r.Body["error"].(string), "choose one") {
		t.Fatalf("400 body %s", r.Raw)
	}
	// The echo agent still answers 200: the mapping is per failure, not per route.
	g.Do("POST", "/webhook?agent=default", map[string]any{"message": "hi"}, auth).Want(t, 200)
}
