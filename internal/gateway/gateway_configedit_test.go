package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

const jsonCT = "Content-Type: application/json"

// PATCH /api/config is one atomic write: a patch whose 4th op (the 3rd write) fails leaves config.toml byte for
// byte as it was and the running config unchanged, and the error is upstream's ConfigApiError envelope naming
// the op by its index in the request.
func TestConfigPatchAtomic(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before := readConfig(t, cfgPath)
	r := g.Do("PATCH", "/api/config", []map[string]any{
		{"op": "test", "path": "gateway.require_pairing", "value": "true"},
		{"op": "replace", "path": "/gateway/pair_rate_limit_per_minute", "value": "20"},
		{"op": "remove", "path": "risk_profiles.supervised.level"},
		{"op": "replace", "path": "gateway.port", "value": 70000},
	}, auth, jsonCT).Want(t, 400)
	if r.Body["code"] != "validation_failed" || r.Body["op_index"] != float64(3) || r.Body["path"] != "gateway.port" ||
		!strings.Contains(r.Body["message"].(string), "65535") {
		t.Fatalf("error body: %s", r.Raw)
	}
	if after := readConfig(t, cfgPath); after != before {
		t.Fatalf("a refused patch changed config.toml:\n%s", after)
	}
	if v := g.Do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).Body["value"]; v != float64(10) {
		t.Fatalf("the running config changed: %v", v)
	}
	// An unknown path is path_not_found, 404 as upstream answers it.
	r = g.Do("PATCH", "/api/config", []map[string]any{{"op": "replace", "path": "gateway.nope", "value": 1}}, auth, jsonCT).Want(t, 404)
	if r.Body["code"] != "path_not_found" || r.Body["op_index"] != float64(0) {
		t.Errorf("unknown path: %s", r.Raw)
	}

	// The same writes without the bad one land together, with the comments asked for.
	r = g.Do("PATCH", "/api/config", []map[string]any{
		{"op": "replace", "path": "/gateway/pair_rate_limit_per_minute", "value": "20", "comment": "two a minute is too few"},
		{"op": "comment", "path": "agents.default.model_provider", "comment": "offline\nfor tests"},
	}, auth, jsonCT).Want(t, 200)
	if !strings.Contains(string(r.Raw), `"comment":"two a minute is too few"`) || !strings.Contains(string(r.Raw), `"op":"comment"`) {
		t.Errorf("results: %s", r.Raw)
	}
	text := readConfig(t, cfgPath)
	for _, s := range []string{"# two a minute is too few\npair_rate_limit_per_minute = 20\n",
		"# offline\n# for tests\nmodel_provider = \"echo.default\"\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("config.toml lacks %q:\n%s", s, text)
		}
	}
	// A comment on a key the file does not set has no line to go on: refused, nothing written.
	before = readConfig(t, cfgPath)
	r = g.Do("PATCH", "/api/config", []map[string]any{{"op": "comment", "path": "gateway.port", "comment": "x"}}, auth, jsonCT).Want(t, 400)
	if !strings.Contains(r.Body["message"].(string), "not set in the file") || readConfig(t, cfgPath) != before {
		t.Errorf("comment on an unset key: %s", r.Raw)
	}
	// A comment cannot smuggle a TOML line in: a carriage return is refused.
	g.Do("PATCH", "/api/config", []map[string]any{{"op": "comment", "path": "gateway.pair_rate_limit_per_minute",
		"comment": "x\r[gateway]\rrequire_pairing = false"}}, auth, jsonCT).Want(t, 400)
	if readConfig(t, cfgPath) != before {
		t.Fatal("a refused comment wrote the file")
	}
}

// Drift appears when config.toml is edited behind the daemon and goes when the daemon reloads it; a patch of a
// drifted property is refused 409 unless the caller overrides the drift.
func TestConfigDrift(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\npair_rate_limit_per_minute = 10\n")
	auth := rpctest.PairOnce(t, g, code)
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	if r := g.Do("GET", "/api/config/drift", nil, auth).Want(t, 200); string(r.Raw) != "{\"drifted\":[]}\n" {
		t.Fatalf("drift before any hand edit: %s", r.Raw)
	}
	text := strings.Replace(readConfig(t, cfgPath), "pair_rate_limit_per_minute = 10", "pair_rate_limit_per_minute = 11", 1) +
		"\n[providers.models.openai.work]\nmodel = \"gpt-x\"\napi_key = \"sk-hand-edited\"\n"
	writeConfig(t, cfgPath, text)
	r := g.Do("GET", "/api/config/drift", nil, auth).Want(t, 200)
	for _, s := range []string{`{"path":"gateway.pair_rate_limit_per_minute","drifted":true,"in_memory_value":"10","on_disk_value":"11"}`,
		`{"path":"providers.models.openai.work.api_key","secret":true,"drifted":true}`,
		`{"path":"providers.models.openai.work.model","drifted":true,"in_memory_value":"\u003cunset\u003e","on_disk_value":"gpt-x"}`} {
		if !strings.Contains(string(r.Raw), s) {
			t.Errorf("drift lacks %s: %s", s, r.Raw)
		}
	}
	if strings.Contains(string(r.Raw), "sk-hand-edited") {
		t.Fatal("drift shows a secret")
	}
	if l := g.Do("GET", "/api/config/list?prefix=gateway", nil, auth).Raw; !strings.Contains(string(l), `"drifted":[{"path":"gateway.pair_rate_limit_per_minute"`) {
		t.Errorf("list's drifted: %.400s", l)
	}
	patch := []map[string]any{{"op": "replace", "path": "gateway.pair_rate_limit_per_minute", "value": 12}}
	r = g.Do("PATCH", "/api/config", patch, auth, jsonCT).Want(t, 409)
	if r.Body["code"] != "config_changed_externally" || readConfig(t, cfgPath) != text {
		t.Fatalf("patch of a drifted property: %s", r.Raw)
	}
	g.Do("PATCH", "/api/config", patch, auth, jsonCT, "X-ZeroClaw-Override-Drift: true").Want(t, 200)
	if !strings.Contains(readConfig(t, cfgPath), "pair_rate_limit_per_minute = 12") {
		t.Fatal("the override did not write")
	}
	// The override's write took the file's other hand edits in with it: nothing has drifted any more.
	if r := g.Do("GET", "/api/config/drift", nil, auth).Want(t, 200); string(r.Raw) != "{\"drifted\":[]}\n" {
		t.Fatalf("drift after the write: %s", r.Raw)
	}
	writeConfig(t, cfgPath, strings.Replace(readConfig(t, cfgPath), "= 12", "= 13", 1))
	if r := g.Do("GET", "/api/config/drift", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), `"on_disk_value":"13"`) {
		t.Fatalf("second hand edit: %s", r.Raw)
	}
	g.Do("POST", "/admin/reload", nil, auth).Want(t, 200)
	if r := g.Do("GET", "/api/config/drift", nil, auth).Want(t, 200); string(r.Raw) != "{\"drifted\":[]}\n" {
		t.Fatalf("drift after reload: %s", r.Raw)
	}
	// A file broken by hand cannot be compared: empty, with why.
	writeConfig(t, cfgPath, "[gateway\n")
	if r := g.Do("GET", "/api/config/drift", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), `"drifted":[],"error":"config: config.toml:`) ||
		strings.Contains(string(r.Raw), d.ConfigDir) {
		t.Fatalf("drift of a broken file: %s", r.Raw)
	}
}

// delete-plan answers what config/map-key-delete would do; init has nothing to instantiate; migrate rewrites
// an older schema in one write with a backup.
func TestConfigDeletePlanInitMigrate(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[permission_profiles.ops]\ngrants = [\"status:read\"]\n")
	auth := rpctest.PairOnce(t, g, code)
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before := readConfig(t, cfgPath)
	r := g.Do("GET", "/api/config/delete-plan?path=risk_profiles&key=supervised", nil, auth).Want(t, 200)
	if string(r.Raw) != `{"path":"risk_profiles","key":"supervised","allowed":false,"blockers":[{"path":"agents.default.risk_profile","raw_value":"supervised","message":"risk profile \"supervised\" is not defined under risk_profiles"}],"scrubs":[],"cascades_owned_state":false}`+"\n" {
		t.Errorf("plan: %s", r.Raw)
	}
	if r := g.Do("GET", "/api/config/delete-plan?path=permission_profiles&key=ops", nil, auth).Want(t, 200); r.Body["allowed"] != true {
		t.Errorf("plan of an unreferenced entry: %s", r.Raw)
	}
	r = g.Do("GET", "/api/config/delete-plan?path=agents&key=ghost", nil, auth).Want(t, 404)
	if r.Body["code"] != "path_not_found" {
		t.Errorf("plan of a missing entry: %s", r.Raw)
	}
	g.Do("GET", "/api/config/delete-plan?path=gateway&key=port", nil, auth).Want(t, 400)
	if readConfig(t, cfgPath) != before {
		t.Fatal("a plan wrote config.toml")
	}

	if r := g.Do("POST", "/api/config/init?section=gateway", nil, auth, jsonCT).Want(t, 200); string(r.Raw) != "{\"initialized\":[]}\n" {
		t.Errorf("init: %s", r.Raw)
	}
	r = g.Do("POST", "/api/config/init?section=tunnel.openvpn", nil, auth, jsonCT).Want(t, 404)
	if !strings.Contains(r.Body["message"].(string), "tunnel") {
		t.Errorf("init of a section we do not have: %s", r.Raw)
	}
	if readConfig(t, cfgPath) != before {
		t.Fatal("init wrote config.toml")
	}

	if r := g.Do("POST", "/api/config/migrate", nil, auth, jsonCT).Want(t, 200); string(r.Raw) != "{\"migrated\":false,\"schema_version\":3}\n" {
		t.Errorf("migrate of a v3 file: %s", r.Raw)
	}
	// An upstream v2 file (written behind the daemon, then reloaded, as an upgrade would leave it): writes are
	// refused until it is migrated, then migrate rewrites it once, keeping the old file.
	// The [gateway] table (the paired device's token) stays as the daemon wrote it.
	gw := before[strings.Index(before, "[gateway]"):]
	v2 := "# my v2 install\nschema_version = 2\n\n[providers]\ndefault_provider = \"echo\"\n\n# offline\n[providers.models.echo]\nmodel = \"echo\"\n\n" + gw
	writeConfig(t, cfgPath, v2)
	g.Do("POST", "/admin/reload", nil, auth).Want(t, 200)
	r = g.Do("PATCH", "/api/config", []map[string]any{{"op": "replace", "path": "gateway.pair_rate_limit_per_minute", "value": 9}}, auth, jsonCT).Want(t, 400)
	if !strings.Contains(r.Body["message"].(string), "zeroclaw config migrate") {
		t.Errorf("patch of a v2 file: %s", r.Raw)
	}
	r = g.Do("POST", "/api/config/migrate", nil, auth, jsonCT).Want(t, 200)
	if r.Body["migrated"] != true || r.Body["backup_path"] != "config.toml.bak" || r.Body["schema_version"] != float64(3) || r.Body["from"] != float64(2) {
		t.Fatalf("migrate: %s", r.Raw)
	}
	if b := readConfig(t, cfgPath+".bak"); b != v2 {
		t.Errorf("backup:\n%s", b)
	}
	if m := readConfig(t, cfgPath); !strings.Contains(m, "schema_version = 3") || !strings.Contains(m, "# my v2 install") ||
		!strings.Contains(m, "[providers.models.echo.default]") {
		t.Errorf("migrated file:\n%s", readConfig(t, cfgPath))
	}
	g.Do("PATCH", "/api/config", []map[string]any{{"op": "replace", "path": "gateway.pair_rate_limit_per_minute", "value": 9}}, auth, jsonCT).Want(t, 200)
}

func readConfig(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeConfig(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
