package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// wsUpgradeHeaders are the headers of a WebSocket upgrade request.
var wsUpgradeHeaders = []string{"Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="}

// hostOf is the gateway's host:port.
func hostOf(g *rpctest.Gateway) string { return strings.TrimPrefix(g.Base, "http://") }

// Issue 20, critical 1: no gateway client but the owner obtains or mints a pairing code or reaches /admin/*,
// whatever its address: 401 without a token, 403 with a restricted device's; the owner's token works. A code
// minted with a profile gives its device that profile's grants only, kept in gateway.paired_token_profiles
// until the device is revoked.
func TestGatewayOwnerOnlyCodesAndAdmin(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayProfilesConfig)
	owner := rpctest.PairOnce(t, g, code)
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	chatter := rpctest.PairWithProfile(t, d, g, "chatter")

	routes := [][2]string{{"GET", "/pair/code"}, {"GET", "/admin/paircode"}, {"POST", "/admin/paircode/new"},
		{"POST", "/admin/paircode/new?rotate=all"}, {"POST", "/admin/reload"}, {"POST", "/admin/shutdown"},
		{"POST", "/api/pairing/initiate"}, {"POST", "/api/devices/nope/token/rotate"}}
	for _, r := range routes {
		if res := g.Do(r[0], r[1], nil).Want(t, 401); strings.Contains(string(res.Raw), "pairing_code") {
			t.Fatalf("%s %s without a token: %s", r[0], r[1], res.Raw)
		}
		for _, dev := range []string{viewer, chatter} {
			if res := g.Do(r[0], r[1], nil, dev).Want(t, 403); strings.Contains(string(res.Raw), "pairing_code") {
				t.Fatalf("%s %s with a restricted token: %s", r[0], r[1], res.Raw)
			}
		}
	}
	// Nothing changed: every device still works, the daemon runs.
	for _, dev := range []string{owner, viewer} {
		g.Do("GET", "/api/status", nil, dev).Want(t, 200)
	}
	// The restricted devices have their profile's grants only.
	g.Do("GET", "/api/devices", nil, viewer).Want(t, 403)
	g.Do("GET", "/api/status", nil, chatter).Want(t, 403)
	g.Do("PUT", "/api/config/prop", map[string]any{"path": "risk_profiles.supervised.level", "value": "full"}, chatter).Want(t, 403)

	// The owner reads and mints codes (upstream's shapes).
	pc := g.Do("GET", "/pair/code", nil, owner).Want(t, 200)
	if pc.Body["success"] != true || pc.Body["pairing_required"] != true {
		t.Fatalf("/pair/code for the owner: %s", pc.Raw)
	}
	minted := g.Do("POST", "/admin/paircode/new", nil, owner).Want(t, 200)
	if c, _ := minted.Body["pairing_code"].(string); len(c) != 6 {
		t.Fatalf("/admin/paircode/new for the owner: %s", minted.Raw)
	}
	g.Do("POST", "/admin/reload", nil, owner).Want(t, 200)

	// The profiles are in the config, one entry per restricted device, and go with the device.
	c := dialRC(t, d, "")
	var prof []string
	c.mustCall("config/get", map[string]any{"prop": "gateway.paired_token_profiles"}, &struct {
		Value *[]string `json:"value"`
	}{&prof})
	if len(prof) != 2 || !strings.HasSuffix(prof[0], ":viewer") || !strings.HasSuffix(prof[1], ":chatter") {
		t.Fatalf("paired_token_profiles = %q", prof)
	}
	var devs struct {
		Devices []struct {
			ID string `json:"id"`
		} `json:"devices"`
	}
	c.mustCall("devices/list", map[string]any{}, &devs)
	for _, dv := range devs.Devices {
		c.mustCall("devices/revoke", map[string]any{"id": dv.ID}, nil)
	}
	c.mustCall("config/get", map[string]any{"prop": "gateway.paired_token_profiles"}, &struct {
		Value *[]string `json:"value"`
	}{&prof})
	if len(prof) != 0 {
		t.Fatalf("paired_token_profiles after revoking every device = %q", prof)
	}

	// An unknown profile is invalid params, naming the profiles there are.
	_, werr := c.call("pair/code", map[string]any{"profile": "nope"})
	if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Message, `"nope"`) || !strings.Contains(werr.Message, "chatter, viewer") {
		t.Fatalf("pair/code with an unknown profile: %+v", werr)
	}
}

// The owner shuts the daemon down over HTTP; a restricted device may not, over HTTP or [wss] (issue 20 low 11:
// one rule for both: the owner's token).
func TestGatewayShutdownOneRule(t *testing.T) {
	t.Parallel()
	pki := rpctest.NewPKI(t)
	d, g, code := rpctest.StartGateway(t, rpctest.WSSConfig(pki)+"\n[permission_profiles.chatter]\ngrants = [\"sessions:execute\", \"sessions:create\"]\n")
	owner := rpctest.PairOnce(t, g, code)
	chatter := rpctest.PairWithProfile(t, d, g, "chatter")
	g.Do("POST", "/admin/shutdown", nil, chatter).Want(t, 403)
	ws, _, err := rpctest.DialWSS(t, d.WSSAddr(t), pki, rpctest.BearerHeader(chatter))
	if err != nil {
		t.Fatal(err)
	}
	ws.Call("initialize", map[string]any{"protocol_version": 1})
	if r, _ := ws.Call("shutdown", map[string]any{}); errCode(r) != -32012 {
		t.Fatalf("shutdown over wss by a restricted device: %v, want -32012 (forbidden)", r)
	}
	g.Do("GET", "/api/status", nil, owner).Want(t, 200) // still running
	wo, _, err := rpctest.DialWSS(t, d.WSSAddr(t), pki, rpctest.BearerHeader(owner))
	if err != nil {
		t.Fatal(err)
	}
	wo.Call("initialize", map[string]any{"protocol_version": 1})
	if r, _ := wo.Call("shutdown", map[string]any{}); r["result"] == nil {
		t.Fatalf("shutdown over wss by the owner: %v", r)
	}
	select {
	case <-d.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the owner's shutdown over wss did not stop the daemon")
	}
}

// Issue 20, critical 2: a web page cannot drive the gateway. A foreign Host (DNS rebinding) is 403 on every
// route; a foreign or null Origin is 403 on every state-changing route and WebSocket upgrade, even with the
// owner's token; a simple-request content type is 415; and none of it changes anything. The gateway's own
// origin, gateway.allowed_hosts and gateway.allowed_origins pass; reads and native clients (no Origin) are as
// before.
func TestGatewayBrowserRules(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	owner := rpctest.PairOnce(t, g, code)
	self := hostOf(g)
	port := self[strings.LastIndex(self, ":")+1:]
	evilHost := "evil.example:" + port
	evil := "Origin: http://" + evilHost
	limit := func() any {
		return g.Do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, owner).Want(t, 200).Body["value"]
	}
	set := map[string]any{"path": "gateway.pair_rate_limit_per_minute", "value": 20}

	// DNS rebinding: the page's own name, pointing here; Host and Origin agree, the Host is not ours.
	for _, r := range [][2]string{{"GET", "/health"}, {"GET", "/pair/code"}, {"POST", "/admin/reload"}, {"POST", "/admin/shutdown"}} {
		res := g.Do(r[0], r[1], nil, owner, "Host: "+evilHost, evil).Want(t, 403)
		if msg, _ := res.Body["error"].(string); !strings.Contains(msg, "Host") || !strings.Contains(msg, "allowed_hosts") {
			t.Fatalf("%s %s with a foreign Host: %s", r[0], r[1], res.Raw)
		}
	}
	g.Do("GET", "/ws/chat?agent=default", nil, append([]string{owner, "Host: " + evilHost, evil}, wsUpgradeHeaders...)...).Want(t, 403)
	g.Do("PUT", "/api/config/prop", set, owner, "Host: "+evilHost, evil).Want(t, 403)

	// A cross-site page on loopback: the Host is ours, the Origin is not.
	agentPath := filepath.Join(d.ConfigDir, "config.toml")
	raw, err := os.ReadFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agentPath, append(raw, "\n[agents.second]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, origin := range []string{evil, "Origin: null", "Origin: http://localhost", "Origin: http://127.0.0.1:1"} {
		for _, r := range [][2]string{{"POST", "/admin/reload"}, {"POST", "/admin/shutdown"}, {"POST", "/admin/paircode/new?rotate=all"},
			{"POST", "/api/pairing/initiate"}, {"DELETE", "/api/config/prop?path=gateway.pair_rate_limit_per_minute"}} {
			res := g.Do(r[0], r[1], nil, owner, origin).Want(t, 403)
			if msg, _ := res.Body["error"].(string); !strings.Contains(msg, "Origin") || strings.Contains(string(res.Raw), "pairing_code") {
				t.Fatalf("%s %s with %s: %s", r[0], r[1], origin, res.Raw)
			}
		}
		g.Do("PUT", "/api/config/prop", set, owner, origin).Want(t, 403)
		g.Do("POST", "/webhook", map[string]any{"message": "hi"}, owner, origin).Want(t, 403)
		g.Do("GET", "/ws/chat?agent=default", nil, append([]string{owner, origin}, wsUpgradeHeaders...)...).Want(t, 403)
		g.Do("GET", "/acp", nil, append([]string{owner, origin}, wsUpgradeHeaders...)...).Want(t, 403)
	}
	// Simple-request content types, whatever the Origin (a page may omit it): 415.
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		res := g.Do("PUT", "/api/config/prop", `{"path":"gateway.pair_rate_limit_per_minute","value":20}`, owner, "Content-Type: "+ct).Want(t, 415)
		if msg, _ := res.Body["error"].(string); !strings.Contains(msg, "application/json") {
			t.Fatalf("%s body: %s", ct, res.Raw)
		}
		g.Do("POST", "/admin/reload", "x", owner, "Content-Type: "+ct).Want(t, 415)
		g.Do("POST", "/pair", "x", "Content-Type: "+ct, "X-Pairing-Code: 000000").Want(t, 415)
	}
	// Nothing changed: same value, the token works (no rotation), no reload happened, the daemon runs.
	if v := limit(); v != float64(10) {
		t.Fatalf("pair_rate_limit_per_minute = %v after refused writes", v)
	}
	c := dialRC(t, d, "")
	hasSecond := func() bool {
		var agents struct {
			Agents []struct {
				Alias string `json:"alias"`
			} `json:"agents"`
		}
		c.mustCall("agents/list", map[string]any{}, &agents)
		for _, a := range agents.Agents {
			if a.Alias == "second" {
				return true
			}
		}
		return false
	}
	if hasSecond() {
		t.Fatal("a refused reload was applied")
	}

	// The gateway's own origin and native clients pass; a read with a foreign Origin is answered (without a CORS
	// grant, the page cannot read it).
	g.Do("PUT", "/api/config/prop", set, owner, "Origin: http://"+self, "Content-Type: application/json").Want(t, 200)
	if res := g.Do("GET", "/api/status", nil, owner, evil).Want(t, 200); res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a CORS grant: %v", res.Header)
	}
	g.Do("GET", "/ws/chat?agent=default", nil, append([]string{owner, "Origin: http://" + self}, wsUpgradeHeaders...)...).Want(t, 101)
	g.Do("POST", "/admin/reload", nil, owner).Want(t, 200)
	if !hasSecond() {
		t.Fatal("the owner's reload was not applied")
	}

	// Names and origins the owner allows.
	c.mustCall("config/set", map[string]any{"prop": "gateway.allowed_hosts", "value": []string{"zc.example"}}, nil)
	c.mustCall("config/set", map[string]any{"prop": "gateway.allowed_origins", "value": []string{"https://app.example"}}, nil)
	g.Do("GET", "/health", nil, "Host: zc.example:"+port).Want(t, 200)
	g.Do("GET", "/health", nil, "Host: other.example:"+port).Want(t, 403)
	g.Do("PUT", "/api/config/prop", set, owner, "Host: zc.example:"+port, "Origin: http://zc.example:"+port).Want(t, 200)
	g.Do("PUT", "/api/config/prop", set, owner, "Origin: https://app.example").Want(t, 200)
	g.Do("GET", "/ws/chat?agent=default", nil, append([]string{owner, "Origin: https://app.example"}, wsUpgradeHeaders...)...).Want(t, 101)
	g.Do("PUT", "/api/config/prop", set, owner, "Origin: https://app.example:8443").Want(t, 403)
	_, werr := c.call("config/set", map[string]any{"prop": "gateway.allowed_origins", "value": []string{"https://app.example/path"}})
	if werr == nil || !strings.Contains(werr.Message, "allowed_origins") {
		t.Fatalf("an origin with a path: %+v", werr)
	}
}

// Issue 20, high 5 and low 11: a /webhook naming a session (X-Session-Id) checks ownership as session/prompt
// does: a restricted device cannot run a turn in the owner's or another device's session (403, history
// untouched); its own sessions work. Idempotency keys are per device.
func TestGatewayWebhookSessionOwnership(t *testing.T) {
	t.Parallel()
	// Every device is a chatter (the setting that exists upstream too); the owner works over the socket.
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayProfilesConfig+"\n[gateway]\ndevice_permission_profiles = [\"chatter\"]\n")
	a := rpctest.PairOnce(t, g, code)
	c := dialRC(t, d, "")
	var pc struct {
		PairingCode string `json:"pairing_code"`
	}
	c.mustCall("pair/code", map[string]any{}, &pc)
	b := rpctest.PairOnce(t, g, pc.PairingCode)
	turn := func(auth, sid, msg string, hdr ...string) rpctest.Response {
		return g.Do("POST", "/webhook", map[string]any{"message": msg}, append([]string{auth, "X-Session-Id: " + sid}, hdr...)...)
	}
	var nw struct {
		SessionID string `json:"session_id"`
	}
	c.mustCall("session/new", map[string]any{"session_id": "owner-notes", "agent_alias": "default"}, &nw)
	c.prompt("owner-notes", "the owner's secret", hooks{})
	turn(b, "b-notes", "b's secret").Want(t, 200)

	count := func(sid string) int {
		var m struct {
			Messages []any `json:"messages"`
		}
		c.mustCall("session/messages", map[string]any{"session_id": sid}, &m)
		return len(m.Messages)
	}
	before := map[string]int{"owner-notes": count("owner-notes"), "b-notes": count("b-notes")}
	for sid, n := range before {
		if n == 0 {
			t.Fatalf("%s has no history to protect", sid)
		}
		res := turn(a, sid, "tell me everything").Want(t, 403)
		if strings.Contains(string(res.Raw), "secret") || !strings.Contains(res.Body["error"].(string), "another principal") {
			t.Fatalf("webhook into %s by another device: %s", sid, res.Raw)
		}
		if got := count(sid); got != n {
			t.Fatalf("%s: %d messages after a refused turn, %d before", sid, got, n)
		}
	}
	// Its own session, new or continued, works.
	turn(a, "a-notes", "mine").Want(t, 200)
	turn(a, "a-notes", "mine again").Want(t, 200)
	// The REST mirrors too: another's history and state are not the device's to read.
	for _, path := range []string{"/api/sessions/owner-notes/messages", "/api/sessions/b-notes/messages", "/api/sessions/owner-notes/state"} {
		if r := g.Do("GET", path, nil, a).Want(t, 403); strings.Contains(string(r.Raw), "secret") {
			t.Fatalf("%s: %s", path, r.Raw)
		}
	}
	g.Do("GET", "/api/sessions/a-notes/messages", nil, a).Want(t, 200)
	// /ws/chat?session_id= applies the same rule: another's session does not open, its own does.
	ws := rpctest.DialWS(t, g.Base, "/ws/chat?agent=default&session_id=owner-notes", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(a)})
	if f := ws.Next(); f["type"] != "error" || f["code"] != "AGENT_INIT_FAILED" || !strings.Contains(f["message"].(string), "not owned") {
		t.Fatalf("/ws/chat into the owner's session: %v", f)
	}
	own := rpctest.DialWS(t, g.Base, "/ws/chat?agent=default&session_id=a-notes", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(a)})
	if f := own.Next(); f["type"] != "session_start" || f["resumed"] != true {
		t.Fatalf("/ws/chat into its own session: %v", f)
	}
	if n := count("owner-notes"); n != before["owner-notes"] {
		t.Fatalf("owner-notes: %d messages after a refused socket, %d before", n, before["owner-notes"])
	}

	// Idempotency keys per device: b's key does not answer a's request; a's replay is a duplicate.
	first := turn(a, "a-notes", "once", "X-Idempotency-Key: k1").Want(t, 200)
	if first.Body["response"] == nil {
		t.Fatalf("first use of k1: %s", first.Raw)
	}
	if r := turn(b, "b-notes", "once too", "X-Idempotency-Key: k1").Want(t, 200); r.Body["status"] == "duplicate" {
		t.Fatalf("another device's key k1 answered b: %s", r.Raw)
	}
	if r := turn(a, "a-notes", "once", "X-Idempotency-Key: k1").Want(t, 200); r.Body["status"] != "duplicate" || r.Body["idempotent"] != true {
		t.Fatalf("a's replay of k1: %s", r.Raw)
	}
}

// On the socket, minting a code is the owner's too: a local user holding every device grant gets -32012
// (admin) from pair/code and devices/rotate, so it cannot pair itself an owner-equal device.
func TestPairCodeNeedsAdminOnSocket(t *testing.T) {
	t.Parallel()
	d := rpctest.Start(t, asUser("devices:read", "devices:delete", "sessions:execute"))
	u := d.Dial(t)
	u.Initialize()
	if data := mustError(t, call(t, u, 1, "pair/code", map[string]any{}), -32012); data["grant"] != "admin" {
		t.Fatalf("pair/code data %v, want grant admin", data)
	}
	if data := mustError(t, call(t, u, 2, "devices/rotate", map[string]any{"id": "x"}), -32012); data["grant"] != "admin" {
		t.Fatalf("devices/rotate data %v, want grant admin", data)
	}
	mustResult(t, call(t, u, 3, "devices/list", map[string]any{}))
}

// Rotating a restricted device's token hands out a code with the same profile: rotation never widens a device.
func TestGatewayRotateKeepsProfile(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayProfilesConfig)
	owner := rpctest.PairOnce(t, g, code)
	ids := func() []string {
		var out []string
		for _, dv := range g.Do("GET", "/api/devices", nil, owner).Want(t, 200).Body["devices"].([]any) {
			out = append(out, dv.(map[string]any)["id"].(string))
		}
		return out
	}
	ownerID := ids()[0]
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	var viewerID string
	for _, id := range ids() {
		if id != ownerID {
			viewerID = id
		}
	}
	r := g.Do("POST", "/api/devices/"+viewerID+"/token/rotate", nil, owner).Want(t, 200)
	next, _ := r.Body["pairing_code"].(string)
	if len(next) != 6 {
		t.Fatalf("rotate: %s", r.Raw)
	}
	g.Do("GET", "/api/status", nil, viewer).Want(t, 401)
	again := rpctest.PairOnce(t, g, next)
	g.Do("GET", "/api/status", nil, again).Want(t, 200)
	g.Do("GET", "/api/devices", nil, again).Want(t, 403)
	g.Do("GET", "/pair/code", nil, again).Want(t, 403)
}

// status names the install's paths (config_dir, config_file, local_ipc_endpoint, data_dir) to the owner only:
// a restricted device reads the same fields empty (upstream's clients still parse them) and no path at all.
func TestGatewayStatusPathsOwnerOnly(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayProfilesConfig)
	owner := rpctest.PairOnce(t, g, code)
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	paths := []string{"config_dir", "config_file", "local_ipc_endpoint", "data_dir"}
	full := g.Do("GET", "/api/status", nil, owner).Want(t, 200)
	for _, k := range paths {
		if v, _ := full.Body[k].(string); v == "" {
			t.Fatalf("the owner's status has no %s: %s", k, full.Raw)
		}
	}
	root := full.Body["config_dir"].(string)
	restricted := g.Do("GET", "/api/status", nil, viewer).Want(t, 200)
	for _, k := range paths {
		if v, ok := restricted.Body[k]; !ok || v != "" {
			t.Fatalf("a viewer device's status %s = %v (present %v), want the field empty", k, v, ok)
		}
	}
	if strings.Contains(string(restricted.Raw), root) {
		t.Fatalf("the viewer's status names the install %s: %s", root, restricted.Raw)
	}
	if restricted.Body["pid"] != full.Body["pid"] || restricted.Body["protocol_version"] != full.Body["protocol_version"] {
		t.Fatalf("the rest of status differs: %s vs %s", restricted.Raw, full.Raw)
	}
}
