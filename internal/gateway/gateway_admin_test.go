package gateway_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// A token removed from config.toml by hand stops working at the next reload, and its device leaves the
// registry; POST /admin/reload with the owner's token keeps the pid and applies a new agent.
func TestGatewayReloadReconcilesDevices(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	if n := g.Do("GET", "/api/devices", nil, auth).Want(t, 200).Body["count"]; n != float64(1) {
		t.Fatalf("devices before: %v", n)
	}
	pid := g.Do("GET", "/api/status", nil, auth).Want(t, 200).Body["pid"]

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
	g.Do("GET", "/api/status", nil, auth).Want(t, 200)
	r := g.Do("POST", "/admin/reload", nil, auth).Want(t, 200)
	if r.Body["success"] != true || r.Body["message"] != "Daemon reload initiated" {
		t.Fatalf("reload body %s", r.Raw)
	}
	g.Do("GET", "/api/status", nil, auth).Want(t, 401)
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
	t.Parallel()
	ip := remoteIP(t)
	cfg := rpctest.GatewayConfig + "\n[gateway]\nhost = \"0.0.0.0\"\nallow_public_bind = true\n"
	d, local, code := rpctest.StartGateway(t, cfg)
	port := d.GatewayURL(t)[strings.LastIndex(d.GatewayURL(t), ":")+1:]
	remote := rpctest.NewGateway(t, "http://"+ip+":"+port)

	remote.Do("POST", "/admin/reload", nil).Want(t, 401)
	remote.Do("POST", "/admin/shutdown", nil).Want(t, 401)
	remote.Do("GET", "/admin/paircode", nil).Want(t, 401)
	remote.Do("GET", "/pair/code", nil).Want(t, 401)
	local.Do("GET", "/pair/code", nil).Want(t, 401)
	// A remote client pairs (the code reached it out of band) and uses the API.
	auth := rpctest.PairOnce(t, remote, code)
	remote.Do("GET", "/api/status", nil, auth).Want(t, 200)
	r := remote.Do("POST", "/admin/reload", nil, auth).Want(t, 403)
	if !strings.Contains(r.Body["error"].(string), "restricted to localhost") {
		t.Fatalf("remote reload body %s", r.Raw)
	}
	remote.Do("POST", "/admin/shutdown", nil, auth).Want(t, 403)
	remote.Do("GET", "/pair/code", nil, auth).Want(t, 403)
	if local.Do("GET", "/pair/code", nil, auth).Want(t, 200).Body["success"] != true {
		t.Fatal("the owner on loopback does not see the code")
	}

	// With allow_remote_admin the paired remote client may reload; without a token it may not.
	c := dialRC(t, d, "")
	c.mustCall("config/set", map[string]any{"prop": "gateway.allow_remote_admin", "value": true}, nil)
	remote.Do("POST", "/admin/reload", nil).Want(t, 401)
	remote.Do("POST", "/admin/reload", nil, auth).Want(t, 200)
	// The daemon is still serving after all of it.
	local.Do("GET", "/health", nil).Want(t, 200)
}

// A device limited by gateway.device_permission_profiles gets 403 on what its grants do not cover.
func TestGatewayDeviceGrants(t *testing.T) {
	t.Parallel()
	cfg := rpctest.GatewayConfig + `
[permission_profiles.viewer]
grants = ["status:read"]

[gateway]
device_permission_profiles = ["viewer"]
`
	_, g, code := rpctest.StartGateway(t, cfg)
	auth := rpctest.PairOnce(t, g, code)
	g.Do("GET", "/api/status", nil, auth).Want(t, 200)
	r := g.Do("GET", "/api/devices", nil, auth).Want(t, 403)
	if !strings.Contains(r.Body["error"].(string), "devices:read") {
		t.Fatalf("forbidden body %s", r.Raw)
	}
	g.Do("PUT", "/api/config/prop", map[string]any{"path": "gateway.port", "value": 1}, auth).Want(t, 403)
}

// path_prefix: routes live under the prefix only; <prefix>/ redirects to <prefix>.
func TestGatewayPathPrefix(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\npath_prefix = \"/zc\"\n")
	g.Do("GET", "/zc/health", nil).Want(t, 200)
	g.Do("GET", "/health", nil).Want(t, 404)
	r := g.Do("GET", "/zc/", nil).Want(t, 308)
	if r.Header.Get("Location") != "/zc" {
		t.Fatalf("redirect to %q", r.Header.Get("Location"))
	}
}

// The /api/config routes are the config/* methods: get, set (upstream's {path, value}), and errors as statuses.
func TestGatewayConfigRoutes(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	r := g.Do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).Want(t, 200)
	if r.Body["value"] != float64(10) {
		t.Fatalf("config get %s", r.Raw)
	}
	g.Do("PUT", "/api/config/prop", map[string]any{"path": "gateway.pair_rate_limit_per_minute", "value": 20}, auth).Want(t, 200)
	if v := g.Do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).Want(t, 200).Body["value"]; v != float64(20) {
		t.Fatalf("after set: %v", v)
	}
	g.Do("GET", "/api/config/prop?path=gateway.nope", nil, auth).Want(t, 400)
	g.Do("GET", "/api/config/prop", nil, auth).Want(t, 400)
	sessions := g.Do("GET", "/api/sessions", nil, auth).Want(t, 200)
	if _, ok := sessions.Body["sessions"]; !ok {
		t.Fatalf("sessions %s", sessions.Raw)
	}
	g.Do("GET", "/api/sessions/nope/state", nil, auth).Want(t, 404)
	g.Do("POST", "/api/sessions/nope/abort", nil, auth).Want(t, 404)
}

// A request forwarded by a proxy on this host is not local, whatever its TCP peer: no admin routes or code
// without a token (401, as for anyone), none with the owner's either (403: remote), and no loopback exemption
// from the auth limiter.
func TestGatewayForwardedIsNotLocal(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	fwd := "X-Forwarded-For: 198.51.100.4"
	g.Do("GET", "/pair/code", nil, fwd).Want(t, 401)
	g.Do("POST", "/admin/reload", nil, fwd).Want(t, 401)
	g.Do("POST", "/admin/shutdown", nil, fwd).Want(t, 401)
	auth := rpctest.PairOnce(t, g, code)
	g.Do("GET", "/pair/code", nil, auth, fwd).Want(t, 403)
	g.Do("POST", "/admin/reload", nil, auth, fwd).Want(t, 403)
	g.Do("POST", "/admin/shutdown", nil, auth, fwd).Want(t, 403)
	for range 10 - 3 { // the three tokenless admin requests above were failures too
		g.Do("GET", "/api/status", nil, "Authorization: Bearer zc_nope", fwd).Want(t, 401)
	}
	// Without trust_forwarded_headers the key is the peer (127.0.0.1), now locked out for forwarded requests.
	g.Do("GET", "/api/status", nil, auth, fwd).Want(t, 429)
	g.Do("GET", "/api/status", nil, auth).Want(t, 200) // the host itself is exempt
}

// PUT /api/config/prop with upstream's comment writes the value and the comment above its key together; a
// refused value writes neither (the file stays byte for byte).
func TestGatewayConfigPropPutComment(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	file := filepath.Join(d.ConfigDir, "config.toml")
	r := g.Do("PUT", "/api/config/prop", map[string]any{"path": "gateway.pair_rate_limit_per_minute", "value": 25,
		"comment": "raised for the kiosk"}, auth).Want(t, 200)
	if r.Body["prop"] != "gateway.pair_rate_limit_per_minute" || r.Body["set"] != true {
		t.Fatalf("PUT with a comment: %s", r.Raw)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^# raised for the kiosk\npair_rate_limit_per_minute = 25$`).Match(raw) {
		t.Fatalf("config.toml lacks the comment above the key:\n%s", raw)
	}
	if v := g.Do("GET", "/api/config/prop?path=gateway.pair_rate_limit_per_minute", nil, auth).Body["value"]; v != float64(25) {
		t.Fatalf("after set: %v", v)
	}
	g.Do("PUT", "/api/config/prop", map[string]any{"path": "gateway.pair_rate_limit_per_minute", "value": "lots",
		"comment": "never written"}, auth).Want(t, 400)
	if after, _ := os.ReadFile(file); string(after) != string(raw) {
		t.Fatalf("a refused PUT changed config.toml:\n%s", after)
	}
}
