package rpctest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pairOnce pairs through POST /pair and returns the bearer header.
func pairOnce(t *testing.T, g *gw, code string) string {
	t.Helper()
	tok := g.do("POST", "/pair", nil, "X-Pairing-Code: "+code).want(t, 200).body["token"].(string)
	return "Authorization: Bearer " + tok
}

// A token removed from config.toml by hand stops working at the next reload, and its device leaves the
// registry; POST /admin/reload with the owner's token keeps the pid and applies a new agent.
func TestGatewayReloadReconcilesDevices(t *testing.T) {
	d, g, code := startGateway(t, gwBaseConfig)
	auth := pairOnce(t, g, code)
	if n := g.do("GET", "/api/devices", nil, auth).want(t, 200).body["count"]; n != float64(1) {
		t.Fatalf("devices before: %v", n)
	}
	pid := g.do("GET", "/api/status", nil, auth).want(t, 200).body["pid"]

	path := filepath.Join(d.ConfigDir, "config.toml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`paired_tokens = \[[^\]]*\]`).ReplaceAllString(string(raw), "paired_tokens = []")
	if edited == string(raw) {
		t.Fatalf("no paired_tokens line in\n%s", raw)
	}
	edited += "\n[agents.second]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	// Until the reload the daemon runs the old config: the token still works.
	g.do("GET", "/api/status", nil, auth).want(t, 200)
	r := g.do("POST", "/admin/reload", nil, auth).want(t, 200)
	if r.body["success"] != true || r.body["message"] != "Daemon reload initiated" {
		t.Fatalf("reload body %s", r.raw)
	}
	g.do("GET", "/api/status", nil, auth).want(t, 401)
	// No token is left: the next device needs a code, as at start (the owner reads it over the socket).
	c := dialRC(t, d, "")
	var pc struct {
		PairingCode string `json:"pairing_code"`
	}
	c.mustCall("pair/code", map[string]any{}, &pc)
	if len(pc.PairingCode) != 6 || pc.PairingCode == code {
		t.Fatalf("pairing code after every token was removed: %v", pc)
	}

	// Same process, new agent; and the device row is gone (checked over the socket as the operator).
	var st struct {
		PID int `json:"pid"`
	}
	c.mustCall("status", map[string]any{}, &st)
	if float64(st.PID) != pid {
		t.Fatalf("pid %d after reload, was %v", st.PID, pid)
	}
	var agents struct {
		Agents []struct {
			Alias string `json:"alias"`
		} `json:"agents"`
	}
	c.mustCall("agents/list", map[string]any{}, &agents)
	found := false
	for _, a := range agents.Agents {
		found = found || a.Alias == "second"
	}
	if !found {
		t.Fatalf("agent 'second' not applied by the reload: %+v", agents)
	}
	var devs struct {
		Count int `json:"count"`
	}
	c.mustCall("devices/list", map[string]any{}, &devs)
	if devs.Count != 0 {
		t.Fatalf("device of a removed token still listed: %d", devs.Count)
	}
}

// A remote client (a real non-loopback peer) is refused the admin routes and the pairing code: 401 without a
// token (issue 20: the peer's address grants nothing), 403 with the owner's token while allow_remote_admin is
// off; with it, the owner's token reloads from afar.
func TestGatewayRemoteAdminRules(t *testing.T) {
	ip := remoteIP(t)
	cfg := gwBaseConfig + "\n[gateway]\nhost = \"0.0.0.0\"\nallow_public_bind = true\n"
	d, local, code := startGateway(t, cfg)
	port := d.GatewayURL(t)[strings.LastIndex(d.GatewayURL(t), ":")+1:]
	remote := newGW(t, "http://"+ip+":"+port)

	remote.do("POST", "/admin/reload", nil).want(t, 401)
	remote.do("POST", "/admin/shutdown", nil).want(t, 401)
	remote.do("GET", "/admin/paircode", nil).want(t, 401)
	remote.do("GET", "/pair/code", nil).want(t, 401)
	local.do("GET", "/pair/code", nil).want(t, 401)
	// A remote client pairs (the code reached it out of band) and uses the API.
	auth := pairOnce(t, remote, code)
	remote.do("GET", "/api/status", nil, auth).want(t, 200)
	r := remote.do("POST", "/admin/reload", nil, auth).want(t, 403)
	if !strings.Contains(r.body["error"].(string), "restricted to localhost") {
		t.Fatalf("remote reload body %s", r.raw)
	}
	remote.do("POST", "/admin/shutdown", nil, auth).want(t, 403)
	remote.do("GET", "/pair/code", nil, auth).want(t, 403)
	if local.do("GET", "/pair/code", nil, auth).want(t, 200).body["success"] != true {
		t.Fatal("the owner on loopback does not see the code")
	}

	// With allow_remote_admin the paired remote client may reload; without a token it may not.
	c := dialRC(t, d, "")
	c.mustCall("config/set", map[string]any{"prop": "gateway.allow_remote_admin", "value": true}, nil)
	remote.do("POST", "/admin/reload", nil).want(t, 401)
	remote.do("POST", "/admin/reload", nil, auth).want(t, 200)
	// The daemon is still serving after all of it.
	local.do("GET", "/health", nil).want(t, 200)
}

// A device limited by gateway.device_permission_profiles gets 403 on what its grants do not cover.
func TestGatewayDeviceGrants(t *testing.T) {
	cfg := gwBaseConfig + `
[permission_profiles.viewer]
grants = ["status:read"]

[gateway]
device_permission_profiles = ["viewer"]
`
	_, g, code := startGateway(t, cfg)
	auth := pairOnce(t, g, code)
	g.do("GET", "/api/status", nil, auth).want(t, 200)
	r := g.do("GET", "/api/devices", nil, auth).want(t, 403)
	if !strings.Contains(r.body["error"].(string), "devices:read") {
		t.Fatalf("forbidden body %s", r.raw)
	}
	g.do("PUT", "/api/config/prop", map[string]any{"path": "gateway.port", "value": 1}, auth).want(t, 403)
}

// path_prefix: routes live under the prefix only; <prefix>/ redirects to <prefix>.
func TestGatewayPathPrefix(t *testing.T) {
	_, g, _ := startGateway(t, gwBaseConfig+"\n[gateway]\npath_prefix = \"/zc\"\n")
	g.do("GET", "/zc/health", nil).want(t, 200)
	g.do("GET", "/health", nil).want(t, 404)
	r := g.do("GET", "/zc/", nil).want(t, 308)
	if r.hdr.Get("Location") != "/zc" {
		t.Fatalf("redirect to %q", r.hdr.Get("Location"))
	}
}

// The /api/config routes are the config/* methods: get, set (upstream's {path, value}), and errors as statuses.
func TestGatewayConfigRoutes(t *testing.T) {
	_, g, code := startGateway(t, gwBaseConfig)
	auth := pairOnce(t, g, code)
	r := g.do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).want(t, 200)
	if r.body["value"] != float64(10) {
		t.Fatalf("config get %s", r.raw)
	}
	g.do("PUT", "/api/config/prop", map[string]any{"path": "gateway.pair_rate_limit_per_minute", "value": 20}, auth).want(t, 200)
	if v := g.do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).want(t, 200).body["value"]; v != float64(20) {
		t.Fatalf("after set: %v", v)
	}
	g.do("GET", "/api/config/prop?path=gateway.nope", nil, auth).want(t, 400)
	g.do("GET", "/api/config/prop", nil, auth).want(t, 400)
	sessions := g.do("GET", "/api/sessions", nil, auth).want(t, 200)
	if _, ok := sessions.body["sessions"]; !ok {
		t.Fatalf("sessions %s", sessions.raw)
	}
	g.do("GET", "/api/sessions/nope/state", nil, auth).want(t, 404)
	g.do("POST", "/api/sessions/nope/abort", nil, auth).want(t, 404)
}

// A request forwarded by a proxy on this host is not local, whatever its TCP peer: no admin routes or code
// without a token (401, as for anyone), none with the owner's either (403: remote), and no loopback exemption
// from the auth limiter.
func TestGatewayForwardedIsNotLocal(t *testing.T) {
	_, g, code := startGateway(t, gwBaseConfig)
	fwd := "X-Forwarded-For: 198.51.100.4"
	g.do("GET", "/pair/code", nil, fwd).want(t, 401)
	g.do("POST", "/admin/reload", nil, fwd).want(t, 401)
	g.do("POST", "/admin/shutdown", nil, fwd).want(t, 401)
	auth := pairOnce(t, g, code)
	g.do("GET", "/pair/code", nil, auth, fwd).want(t, 403)
	g.do("POST", "/admin/reload", nil, auth, fwd).want(t, 403)
	g.do("POST", "/admin/shutdown", nil, auth, fwd).want(t, 403)
	for range 10 - 3 { // the three tokenless admin requests above were failures too
		g.do("GET", "/api/status", nil, "Authorization: Bearer zc_nope", fwd).want(t, 401)
	}
	// Without trust_forwarded_headers the key is the peer (127.0.0.1), now locked out for forwarded requests.
	g.do("GET", "/api/status", nil, auth, fwd).want(t, 429)
	g.do("GET", "/api/status", nil, auth).want(t, 200) // the host itself is exempt
}
