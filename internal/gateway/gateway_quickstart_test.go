package gateway_test

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The web dashboard's quickstart: state, a provider form's fields, apply with the bare submission as the body
// (what upstream's web page posts), the agent then listed, and dismiss answering 204.
func TestGatewayQuickstartRoutes(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, gwMirrorsConfig)
	auth := rpctest.PairOnce(t, g, code)
	st := g.Do("GET", "/api/quickstart/state", nil, auth).Want(t, 200)
	if st.Body["quickstart_completed"] != false || st.Body["risk_presets"] == nil {
		t.Fatalf("state %s", st.Raw)
	}
	f := g.Do("POST", "/api/quickstart/fields", map[string]any{"section": "model_provider", "type_key": "ollama"}, auth).Want(t, 200)
	if !strings.Contains(string(f.Raw), `"key":"uri"`) {
		t.Fatalf("fields %s", f.Raw)
	}
	sub := map[string]any{
		"model_provider":  map[string]any{"mode": "fresh", "value": map[string]any{"provider_type": "echo", "alias": "web", "model": "echo"}},
		"risk_profile":    map[string]any{"mode": "fresh", "value": "locked_down"},
		"runtime_profile": map[string]any{"mode": "fresh", "value": "balanced"},
		"memory":          map[string]any{"mode": "fresh", "value": "none"},
		"channels":        []any{},
		"agent":           map[string]any{"name": "webby", "system_prompt": "", "personality_file": nil},
	}
	if v := g.Do("POST", "/api/quickstart/validate", sub, auth).Want(t, 200); v.Body["kind"] != "ok" {
		t.Fatalf("validate %s", v.Raw)
	}
	a := g.Do("POST", "/api/quickstart/apply", sub, auth).Want(t, 200)
	if a.Body["kind"] != "applied" || !strings.Contains(string(a.Raw), `"alias":"webby"`) {
		t.Fatalf("apply %s", a.Raw)
	}
	if again := g.Do("POST", "/api/quickstart/apply", sub, auth).Want(t, 200); again.Body["kind"] != "errors" {
		t.Fatalf("a second apply of the same submission %s", again.Raw)
	}
	if st := g.Do("GET", "/api/quickstart/state", nil, auth).Want(t, 200); st.Body["quickstart_completed"] != true ||
		!strings.Contains(string(st.Raw), `"webby"`) {
		t.Fatalf("state after apply %s", st.Raw)
	}
	g.Do("POST", "/api/quickstart/dismiss", map[string]any{"run_id": "19a", "surface": "web", "last_step": "agent"}, auth).Want(t, 204)
	g.Do("POST", "/api/quickstart/dismiss", map[string]any{"run_id": "19a", "surface": "fax"}, auth).Want(t, 400)
	g.Do("POST", "/api/quickstart/apply", "[1,2]", auth).Want(t, 400)
}
