package gateway_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// /health is open, carries upstream's fields and the security headers; unknown paths are 404 JSON.
func TestGatewayHealth(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	if len(code) != 6 {
		t.Fatalf("no 6-digit pairing code in the start banner: %q", code)
	}
	r := g.Do("GET", "/health", nil).Want(t, 200)
	if r.Body["status"] != "ok" || r.Body["require_pairing"] != true || r.Body["paired"] != false {
		t.Fatalf("health = %s", r.Raw)
	}
	if rt, ok := r.Body["runtime"].(map[string]any); !ok || rt["status"] == nil {
		t.Fatalf("health.runtime = %v", r.Body["runtime"])
	}
	// The body's members come in the order they always had (sorted: it was encoded from a map), on one line.
	if body := string(r.Raw); !strings.HasPrefix(body, `{"paired":false,"require_pairing":true,"runtime":{"status":"ok",`) ||
		!strings.HasSuffix(body, `}},"status":"ok"}`+"\n") || strings.Count(body, "\n") != 1 {
		t.Errorf("health body %s", body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("health Content-Type %q", ct)
	}
	for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy", "Referrer-Policy"} {
		if r.Header.Get(h) == "" {
			t.Errorf("missing security header %s", h)
		}
	}
	if r.Header.Get("Strict-Transport-Security") != "" {
		t.Error("HSTS sent over plain HTTP")
	}
	g.Do("GET", "/nope", nil).Want(t, 404)
	// The body limit: 64 KiB.
	g.Do("POST", "/api/pair", strings.Repeat("x", 70<<10)).Want(t, 413)
}

var tokenShape = regexp.MustCompile(`^zc_[0-9a-f]{64}$`)

// Pairing end to end: wrong code 403, right code a zc_ token, the token required and accepted, stored only as
// an encrypted SHA-256, the device listed, then revoked and refused.
func TestGatewayPairing(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	g.Do("GET", "/api/status", nil).Want(t, 401)
	g.Do("GET", "/api/status", nil, "Authorization: Bearer zc_"+strings.Repeat("0", 64)).Want(t, 401)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+wrong).Want(t, 403)
	if r.Body["error"] != "Invalid pairing code" {
		t.Fatalf("wrong code body %s", r.Raw)
	}
	r = g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200)
	token, _ := r.Body["token"].(string)
	if !tokenShape.MatchString(token) || r.Body["paired"] != true || r.Body["persisted"] != true {
		t.Fatalf("pair body %s", r.Raw)
	}
	// The code is one-time.
	g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 403)

	auth := "Authorization: Bearer " + token
	st := g.Do("GET", "/api/status", nil, auth).Want(t, 200)
	if st.Body["pid"] != float64(os.Getpid()) {
		t.Fatalf("status over the gateway: %s", st.Raw)
	}
	if h := g.Do("GET", "/health", nil).Want(t, 200); h.Body["paired"] != true {
		t.Fatalf("health after pairing: %s", h.Raw)
	}

	// Stored only hashed, and the field itself encrypted.
	raw, err := os.ReadFile(filepath.Join(d.ConfigDir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	hash := pairing.HashToken(token)
	if strings.Contains(string(raw), token) || strings.Contains(string(raw), hash) {
		t.Fatalf("config.toml holds the token or its hash in clear:\n%s", raw)
	}
	m := regexp.MustCompile(`paired_tokens = \["(enc2:[^"]+)"\]`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("paired_tokens is not one encrypted value:\n%s", raw)
	}
	plain, err := secrets.New(filepath.Join(d.ConfigDir, ".secret_key")).Decrypt(m[1])
	if err != nil || plain != hash {
		t.Fatalf("decrypted paired token = %q, %v; want its SHA-256 %s", plain, err, hash)
	}

	// The device registry.
	devs := g.Do("GET", "/api/devices", nil, auth).Want(t, 200)
	list, _ := devs.Body["devices"].([]any)
	if devs.Body["count"] != float64(1) || len(list) != 1 {
		t.Fatalf("devices %s", devs.Raw)
	}
	id := list[0].(map[string]any)["id"].(string)
	if ip := list[0].(map[string]any)["ip_address"]; ip != "127.0.0.1" {
		t.Fatalf("device ip %v", ip)
	}
	g.Do("DELETE", "/api/devices/nope", nil, auth).Want(t, 404)
	r = g.Do("DELETE", "/api/devices/"+id, nil, auth).Want(t, 200)
	if r.Body["device_id"] != id {
		t.Fatalf("revoke body %s", r.Raw)
	}
	g.Do("GET", "/api/status", nil, auth).Want(t, 401)
}

// The enhanced flow: POST /api/pair with a JSON body, 400 on a wrong code; /pair/code shows the code to the
// owner only (401 without a token, issue 20); `pair/code` over the socket makes a new one after the first was
// used.
func TestGatewayPairEnhancedAndCode(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	pc := g.Do("GET", "/pair/code", nil).Want(t, 401)
	if pc.Body["pairing_code"] != nil {
		t.Fatalf("/pair/code without a token %s", pc.Raw)
	}
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := g.Do("POST", "/api/pair", map[string]any{"code": wrong}).Want(t, 400)
	if r.Body["error"] != "Invalid or expired pairing code" || r.Body["paired"] != false {
		t.Fatalf("wrong code body %s", r.Raw)
	}
	r = g.Do("POST", "/api/pair", map[string]any{"code": code, "device_name": "phone", "device_type": "ios"}).Want(t, 200)
	tok := r.Body["token"].(string)
	if r.Body["message"] != "Pairing successful" || !tokenShape.MatchString(tok) {
		t.Fatalf("pair body %s", r.Raw)
	}
	if pc := g.Do("GET", "/pair/code", nil, "Authorization: Bearer "+tok).Want(t, 200); pc.Body["pairing_code"] != nil || pc.Body["pairing_required"] != true {
		t.Fatalf("a used code is still shown: %s", pc.Raw)
	}
	c := d.Dial(t)
	mustResult(t, call(t, c, 1, "initialize", map[string]any{"protocol_version": 1}))
	res := mustResult(t, call(t, c, 2, "pair/code", map[string]any{}))
	next, _ := res["pairing_code"].(string)
	if len(next) != 6 || next == code {
		t.Fatalf("pair/code = %v", res)
	}
	devs := mustResult(t, call(t, c, 3, "devices/list", map[string]any{}))
	dl := devs["devices"].([]any)
	if len(dl) != 1 || dl[0].(map[string]any)["name"] != "phone" || dl[0].(map[string]any)["device_type"] != "ios" {
		t.Fatalf("devices/list = %v", devs)
	}
}

// Five wrong codes lock the client out for 300 s, even with the right code and even on loopback (the guard);
// the pair request rate (10 a minute) answers 429 past it.
func TestGatewayPairLockoutAndRate(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	for i := range pairing.MaxFailedAttempts {
		g.Do("POST", "/pair", nil, "X-Pairing-Code: "+wrong).Want(t, 403)
		_ = i
	}
	r := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 429)
	if r.Body["retry_after"] != float64(300) || !strings.Contains(r.Body["error"].(string), "Too many failed attempts") {
		t.Fatalf("lockout body %s", r.Raw)
	}
	// Requests 7..10 are still within the rate (all locked out); the 11th is over it.
	for range 4 {
		g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 429)
	}
	r = g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 429)
	if r.Body["error"] != "Too many pairing requests. Please retry later." || r.Body["retry_after"] != float64(60) {
		t.Fatalf("rate body %s", r.Raw)
	}
}

// The auth limiter: 10 failed tokens from one (forwarded, trusted) remote client lock it out with 429, even
// with a good token; another client is unaffected; loopback is never locked out.
func TestGatewayAuthRateLimit(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\ntrust_forwarded_headers = true\n")
	tok := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200).Body["token"].(string)
	bad := "Authorization: Bearer zc_" + strings.Repeat("1", 64)
	good := "Authorization: Bearer " + tok
	from := func(ip string) string { return "X-Forwarded-For: " + ip }
	for range 10 {
		g.Do("GET", "/api/status", nil, bad, from("203.0.113.9")).Want(t, 401)
	}
	r := g.Do("GET", "/api/status", nil, good, from("203.0.113.9")).Want(t, 429)
	if !strings.Contains(r.Body["error"].(string), "Too many auth attempts") || r.Body["retry_after"] != float64(300) {
		t.Fatalf("auth lockout body %s", r.Raw)
	}
	g.Do("GET", "/api/status", nil, good, from("203.0.113.10")).Want(t, 200)
	for range 15 {
		g.Do("GET", "/api/status", nil, bad).Want(t, 401)
	}
	g.Do("GET", "/api/status", nil, good).Want(t, 200)
}

// /metrics is Prometheus text that the Prometheus parser reads, counting the gateway's own requests.
func TestGatewayMetrics(t *testing.T) {
	t.Parallel()
	d, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig)
	g.Do("GET", "/health", nil).Want(t, 200)
	g.Do("GET", "/api/status", nil).Want(t, 401)
	r := g.Do("GET", "/metrics", nil).Want(t, 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(r.Raw)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, r.Raw)
	}
	req := fams["zeroclaw_gateway_requests_total"]
	if req == nil {
		t.Fatalf("no zeroclaw_gateway_requests_total in\n%s", r.Raw)
	}
	seen := map[string]float64{}
	for _, m := range req.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		seen[l["route"]+" "+l["method"]+" "+l["code"]] = m.GetCounter().GetValue()
	}
	if seen["/health GET 200"] != 1 || seen["/api/status GET 401"] != 1 {
		t.Fatalf("request counts %v", seen)
	}
	for _, name := range []string{"zeroclaw_gateway_connections_total", "zeroclaw_gateway_open_connections",
		"zeroclaw_provider_errors_total", "zeroclaw_cost_usd_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("metric %s missing", name)
		}
	}
	if v := fams["zeroclaw_gateway_connections_total"].GetMetric()[0].GetCounter().GetValue(); v < 1 {
		t.Errorf("connections_total = %v", v)
	}

	// A turn over the socket is counted and timed; its tokens are counted.
	c := dialRC(t, d, "")
	sid := c.newSession(api.SessionNewParams{}).SessionID
	c.prompt(sid, "hello metrics", hooks{})
	r = g.Do("GET", "/metrics", nil).Want(t, 200)
	fams, err = parser.TextToMetricFamilies(strings.NewReader(string(r.Raw)))
	if err != nil {
		t.Fatal(err)
	}
	turns := fams["zeroclaw_turns_total"]
	if turns == nil || turns.GetMetric()[0].GetCounter().GetValue() != 1 || turns.GetMetric()[0].GetLabel()[0].GetValue() != "completed" {
		t.Fatalf("turns_total after one turn:\n%s", r.Raw)
	}
	if h := fams["zeroclaw_turn_duration_seconds"]; h == nil || h.GetMetric()[0].GetHistogram().GetSampleCount() != 1 {
		t.Fatalf("turn duration histogram after one turn:\n%s", r.Raw)
	}
	if fams["zeroclaw_tokens_total"] == nil {
		t.Fatalf("tokens_total after one turn:\n%s", r.Raw)
	}
}
