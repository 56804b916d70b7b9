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

// The webhook's 502 carries the turn's error as detail. A hostile (or broken) provider answering with its
// request's credentials echoed back and a body of megabytes must not put the key, nor megabytes, in the
// answer a device gets.
func TestGatewayWebhook502HoldsNoKeyAndIsBounded(t *testing.T) {
	t.Parallel()
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, `{"error":{"message":"you sent %s and x-extra %s %s"}}`, r.Header.Get("Authorization"),
			r.Header.Get("X-Extra"), strings.Repeat("A", 3<<20))
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(llm.Close)
	cfg := rpctest.GatewayConfig + fmt.Sprintf(`
[providers.models.openai.broken]
uri = %q
model = "m"
api_key = "zz-webhook-secret-key-1234567890"
extra_headers = { "X-Extra" = "extra-secret-value-0987654321" }

[agents.broken]
model_provider = "openai.broken"
risk_profile = "supervised"
`, llm.URL)
	_, g, code := rpctest.StartGateway(t, cfg)
	auth := rpctest.PairOnce(t, g, code)
	r := g.Do("POST", "/webhook?agent=broken", map[string]any{"message": "hi"}, auth, "X-Session-Id: hook.hostile").Want(t, 502)
	for _, s := range []string{"webhook-secret-key", "secret-key-1234567890", "extra-secret-value"} {
		if strings.Contains(string(r.Raw), s) {
			t.Errorf("the 502 answer holds %q: %.300s", s, r.Raw)
		}
	}
	if !strings.Contains(string(r.Raw), "you sent") {
		t.Errorf("the 502 detail does not carry the provider's message (nothing was tested): %.300s", r.Raw)
	}
	if len(r.Raw) > 64<<10 {
		t.Errorf("the 502 answer is %d bytes: the provider's body was passed on unbounded", len(r.Raw))
	}
}
