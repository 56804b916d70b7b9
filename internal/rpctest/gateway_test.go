package rpctest

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
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// /health is open, carries upstream's fields and the security headers; unknown paths are 404 JSON.
func TestGatewayHealth(t *testing.T) {
	_, g, code := startGateway(t, gwBaseConfig)
	if len(code) != 6 {
		t.Fatalf("no 6-digit pairing code in the start banner: %q", code)
	}
	r := g.do("GET", "/health", nil).want(t, 200)
	if r.body["status"] != "ok" || r.body["require_pairing"] != true || r.body["paired"] != false {
		t.Fatalf("health = %s", r.raw)
	}
	if rt, ok := r.body["runtime"].(map[string]any); !ok || rt["status"] == nil {
		t.Fatalf("health.runtime = %v", r.body["runtime"])
	}
	// The body's members come in the order they always had (sorted: it was encoded from a map), on one line.
	if body := string(r.raw); !strings.HasPrefix(body, `{"paired":false,"require_pairing":true,"runtime":{"status":"ok",`) ||
		!strings.HasSuffix(body, `}},"status":"ok"}`+"\n") || strings.Count(body, "\n") != 1 {
		t.Errorf("health body %s", body)
	}
	if ct := r.hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("health Content-Type %q", ct)
	}
	for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy", "Referrer-Policy"} {
		if r.hdr.Get(h) == "" {
			t.Errorf("missing security header %s", h)
		}
	}
	if r.hdr.Get("Strict-Transport-Security") != "" {
		t.Error("HSTS sent over plain HTTP")
	}
	g.do("GET", "/nope", nil).want(t, 404)
	// The body limit: 64 KiB.
	g.do("POST", "/api/pair", strings.Repeat("x", 70<<10)).want(t, 413)
}

var tokenShape = regexp.MustCompile(`^zc_[0-9a-f]{64}$`)

// Pairing end to end: wrong code 403, right code a zc_ token, the token required and accepted, stored only as
// an encrypted SHA-256, the device listed, then revoked and refused.
func TestGatewayPairing(t *testing.T) {
	d, g, code := startGateway(t, gwBaseConfig)
	g.do("GET", "/api/status", nil).want(t, 401)
	g.do("GET", "/api/status", nil, "Authorization: Bearer zc_"+strings.Repeat("0", 64)).want(t, 401)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := g.do("POST", "/pair", nil, "X-Pairing-Code: "+wrong).want(t, 403)
	if r.body["error"] != "Invalid pairing code" {
		t.Fatalf("wrong code body %s", r.raw)
	}
	r = g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 200)
	token, _ := r.body["token"].(string)
	if !tokenShape.MatchString(token) || r.body["paired"] != true || r.body["persisted"] != true {
		t.Fatalf("pair body %s", r.raw)
	}
	// The code is one-time.
	g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 403)

	auth := "Authorization: Bearer " + token
	st := g.do("GET", "/api/status", nil, auth).want(t, 200)
	if st.body["pid"] != float64(os.Getpid()) {
		t.Fatalf("status over the gateway: %s", st.raw)
	}
	if h := g.do("GET", "/health", nil).want(t, 200); h.body["paired"] != true {
		t.Fatalf("health after pairing: %s", h.raw)
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
	devs := g.do("GET", "/api/devices", nil, auth).want(t, 200)
	list, _ := devs.body["devices"].([]any)
	if devs.body["count"] != float64(1) || len(list) != 1 {
		t.Fatalf("devices %s", devs.raw)
	}
	id := list[0].(map[string]any)["id"].(string)
	if ip := list[0].(map[string]any)["ip_address"]; ip != "127.0.0.1" {
		t.Fatalf("device ip %v", ip)
	}
	g.do("DELETE", "/api/devices/nope", nil, auth).want(t, 404)
	r = g.do("DELETE", "/api/devices/"+id, nil, auth).want(t, 200)
	if r.body["device_id"] != id {
		t.Fatalf("revoke body %s", r.raw)
	}
	g.do("GET", "/api/status", nil, auth).want(t, 401)
}

// The enhanced flow: POST /api/pair with a JSON body, 400 on a wrong code; /pair/code shows the code to the
// owner only (401 without a token, issue 20); `pair/code` over the socket makes a new one after the first was
// used.
func TestGatewayPairEnhancedAndCode(t *testing.T) {
	d, g, code := startGateway(t, gwBaseConfig)
	pc := g.do("GET", "/pair/code", nil).want(t, 401)
	if pc.body["pairing_code"] != nil {
		t.Fatalf("/pair/code without a token %s", pc.raw)
	}
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := g.do("POST", "/api/pair", map[string]any{"code": wrong}).want(t, 400)
	if r.body["error"] != "Invalid or expired pairing code" || r.body["paired"] != false {
		t.Fatalf("wrong code body %s", r.raw)
	}
	r = g.do("POST", "/api/pair", map[string]any{"code": code, "device_name": "phone", "device_type": "ios"}).want(t, 200)
	tok := r.body["token"].(string)
	if r.body["message"] != "Pairing successful" || !tokenShape.MatchString(tok) {
		t.Fatalf("pair body %s", r.raw)
	}
	if pc := g.do("GET", "/pair/code", nil, "Authorization: Bearer "+tok).want(t, 200); pc.body["pairing_code"] != nil || pc.body["pairing_required"] != true {
		t.Fatalf("a used code is still shown: %s", pc.raw)
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
	_, g, code := startGateway(t, gwBaseConfig)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	for i := range pairing.MaxFailedAttempts {
		g.do("POST", "/pair", nil, "X-Pairing-Code: "+wrong).want(t, 403)
		_ = i
	}
	r := g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 429)
	if r.body["retry_after"] != float64(300) || !strings.Contains(r.body["error"].(string), "Too many failed attempts") {
		t.Fatalf("lockout body %s", r.raw)
	}
	// Requests 7..10 are still within the rate (all locked out); the 11th is over it.
	for range 4 {
		g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 429)
	}
	r = g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 429)
	if r.body["error"] != "Too many pairing requests. Please retry later." || r.body["retry_after"] != float64(60) {
		t.Fatalf("rate body %s", r.raw)
	}
}

// The auth limiter: 10 failed tokens from one (forwarded, trusted) remote client lock it out with 429, even
// with a good token; another client is unaffected; loopback is never locked out.
func TestGatewayAuthRateLimit(t *testing.T) {
	_, g, code := startGateway(t, gwBaseConfig+"\n[gateway]\ntrust_forwarded_headers = true\n")
	tok := g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 200).body["token"].(string)
	bad := "Authorization: Bearer zc_" + strings.Repeat("1", 64)
	good := "Authorization: Bearer " + tok
	from := func(ip string) string { return "X-Forwarded-For: " + ip }
	for range 10 {
		g.do("GET", "/api/status", nil, bad, from("203.0.113.9")).want(t, 401)
	}
	r := g.do("GET", "/api/status", nil, good, from("203.0.113.9")).want(t, 429)
	if !strings.Contains(r.body["error"].(string), "Too many auth attempts") || r.body["retry_after"] != float64(300) {
		t.Fatalf("auth lockout body %s", r.raw)
	}
	g.do("GET", "/api/status", nil, good, from("203.0.113.10")).want(t, 200)
	for range 15 {
		g.do("GET", "/api/status", nil, bad).want(t, 401)
	}
	g.do("GET", "/api/status", nil, good).want(t, 200)
}

// /metrics is Prometheus text that the Prometheus parser reads, counting the gateway's own requests.
func TestGatewayMetrics(t *testing.T) {
	d, g, _ := startGateway(t, gwBaseConfig)
	g.do("GET", "/health", nil).want(t, 200)
	g.do("GET", "/api/status", nil).want(t, 401)
	r := g.do("GET", "/metrics", nil).want(t, 200)
	if ct := r.hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(r.raw)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, r.raw)
	}
	req := fams["zeroclaw_gateway_requests_total"]
	if req == nil {
		t.Fatalf("no zeroclaw_gateway_requests_total in\n%s", r.raw)
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
	r = g.do("GET", "/metrics", nil).want(t, 200)
	fams, err = parser.TextToMetricFamilies(strings.NewReader(string(r.raw)))
	if err != nil {
		t.Fatal(err)
	}
	turns := fams["zeroclaw_turns_total"]
	if turns == nil || turns.GetMetric()[0].GetCounter().GetValue() != 1 || turns.GetMetric()[0].GetLabel()[0].GetValue() != "completed" {
		t.Fatalf("turns_total after one turn:\n%s", r.raw)
	}
	if h := fams["zeroclaw_turn_duration_seconds"]; h == nil || h.GetMetric()[0].GetHistogram().GetSampleCount() != 1 {
		t.Fatalf("turn duration histogram after one turn:\n%s", r.raw)
	}
	if fams["zeroclaw_tokens_total"] == nil {
		t.Fatalf("tokens_total after one turn:\n%s", r.raw)
	}
}
