package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The /api/config routes in upstream's shapes: display strings and kebab-case kinds in the list, the config
// as one object, a JSON Schema, JSON Patch whose string values are read as the leaf's kind, and map-keys of a
// section we do not have.
func TestDashboardConfigRoutes(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	js := "Content-Type: application/json"

	list := g.Do("GET", "/api/config/list?prefix=gateway", nil, auth).Want(t, 200)
	byPath := map[string]map[string]any{}
	for _, e := range list.Body["entries"].([]any) {
		m := e.(map[string]any)
		byPath[m["path"].(string)] = m
	}
	for path, want := range map[string][2]any{
		"gateway.require_pairing":            {"bool", "true"},
		"gateway.pair_rate_limit_per_minute": {"integer", "10"},
		"gateway.allowed_origins":            {"string-array", "[]"},
		"gateway.web_dist_dir":               {"string", ""},
	} {
		if e := byPath[path]; e == nil || e["kind"] != want[0] || e["value"] != want[1] {
			t.Errorf("%s: %v, want kind %v value %q", path, e, want[0], want[1])
		}
	}
	if e := byPath["gateway.paired_tokens"]; e == nil || e["is_secret"] != true || e["value"] != nil {
		t.Errorf("a secret carries no value: %v", e)
	}

	tree := g.Do("GET", "/api/config", nil, auth).Want(t, 200).Body
	gw, _ := tree["gateway"].(map[string]any)
	if gw["pair_rate_limit_per_minute"] != float64(10) || gw["require_pairing"] != true || gw["paired_tokens"] != "****" {
		t.Errorf("GET /api/config gateway: %v", gw)
	}
	schema := g.Do("OPTIONS", "/api/config", nil, auth).Want(t, 200).Body
	port := schema["properties"].(map[string]any)["gateway"].(map[string]any)["properties"].(map[string]any)["port"].(map[string]any)
	if port["type"] != "integer" || port["description"] == "" {
		t.Errorf("schema gateway.port: %v", port)
	}

	// PATCH: a display string for an integer and a list, a pointer path, then remove; a failed test changes nothing.
	r := g.Do("PATCH", "/api/config", []map[string]any{
		{"op": "replace", "path": "/gateway/pair_rate_limit_per_minute", "value": "20"},
		{"op": "add", "path": "gateway.allowed_hosts", "value": "a.example, b.example"},
	}, auth, js).Want(t, 200)
	if r.Body["saved"] != true || !strings.Contains(string(r.Raw), `"value":"20"`) {
		t.Fatalf("patch: %s", r.Raw)
	}
	if v := g.Do("GET", "/api/config/prop?path=gateway.allowed_hosts", nil, auth).Body["value"]; short(v) != `["a.example","b.example"]` {
		t.Errorf("allowed_hosts after patch: %v", v)
	}
	g.Do("PATCH", "/api/config", []map[string]any{
		{"op": "test", "path": "gateway.pair_rate_limit_per_minute", "value": 99},
		{"op": "replace", "path": "gateway.pair_rate_limit_per_minute", "value": 30},
	}, auth, js).Want(t, 409)
	g.Do("PATCH", "/api/config", []map[string]any{{"op": "remove", "path": "/gateway/allowed_hosts"}}, auth, js).Want(t, 200)
	if v := g.Do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).Body["value"]; v != float64(20) {
		t.Errorf("after the failed test: %v", v)
	}
	if v := g.Do("GET", "/api/config/prop?path=gateway.allowed_hosts", nil, auth).Body["value"]; short(v) != `[]` {
		t.Errorf("allowed_hosts after remove: %v", v)
	}
	g.Do("PATCH", "/api/config", []map[string]any{{"op": "replace", "path": "gateway.nope", "value": 1}}, auth, js).Want(t, 404)
	g.Do("PATCH", "/api/config", []map[string]any{{"op": "move", "path": "gateway.port"}}, auth, js).Want(t, 400)
	g.Do("PATCH", "/api/config", map[string]any{}, auth, js).Want(t, 400)

	// Selecting a section's item makes its entry exist.
	for _, c := range []struct {
		path    string
		body    any
		prefix  string
		created bool
	}{
		{"/api/config/sections/agents/items/helper", nil, "agents.helper", true},
		{"/api/config/sections/agents/items/helper", nil, "agents.helper", false},
		{"/api/config/sections/providers.models/items/openai", map[string]any{"alias": "work"}, "providers.models.openai.work", true},
	} {
		r := g.Do("POST", c.path, c.body, auth, js).Want(t, 200)
		var v any
		_ = json.Unmarshal(r.Raw, &v)
		for _, e := range conforms("SelectItemResponse", v, c.path) {
			t.Error(e)
		}
		if r.Body["fields_prefix"] != c.prefix || r.Body["created"] != c.created {
			t.Errorf("%s: %s", c.path, r.Raw)
		}
	}

	mk := g.Do("GET", "/api/config/map-keys?path=mcp_bundles", nil, auth).Want(t, 200)
	if string(mk.Raw) != "{\"path\":\"mcp_bundles\",\"keys\":[]}\n" {
		t.Errorf("absent section: %s", mk.Raw)
	}
	g.Do("GET", "/api/config/map-keys?path=gateway.port", nil, auth).Want(t, 400)
	if k := g.Do("GET", "/api/config/map-keys?path=agents", nil, auth).Want(t, 200).Raw; !strings.Contains(string(k), `"keys":["default","helper"]`) {
		t.Errorf("agents: %s", k)
	}
}
