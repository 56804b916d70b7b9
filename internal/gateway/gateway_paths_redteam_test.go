package gateway_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// status hides the install's paths from a non-admin caller; this sweeps every other GET route the same way:
// a device paired with a profile holding every read grant (not admin) must not learn where the install lives.
func TestGatewayRestrictedReaderSeesNoInstallPath(t *testing.T) {
	t.Parallel()
	cfg := rpctest.GatewayConfig + `
[permission_profiles.reader]
grants = ["status:read", "health:read", "tui:read", "sessions:read", "files:read", "config:read", "memory:read",
  "cron:read", "heartbeat:read", "devices:read", "skills:read", "personality:read", "sops:read", "cost:read",
  "logs:read", "doctor:run"]
`
	d, g, code := rpctest.StartGateway(t, cfg)
	owner := rpctest.PairOnce(t, g, code)
	reader := rpctest.PairWithProfile(t, d, g, "reader")
	// doctor still reports every finding to the reader, its paths written as placeholders.
	full := g.Do("GET", "/api/doctor", nil, owner).Want(t, 200)
	redacted := g.Do("GET", "/api/doctor", nil, reader).Want(t, 200)
	fr, _ := full.Body["results"].([]any)
	rr, _ := redacted.Body["results"].([]any)
	if len(fr) == 0 || len(rr) != len(fr) || !strings.Contains(redacted.Body["results"].([]any)[0].(map[string]any)["message"].(string), "<data_dir>") {
		t.Errorf("doctor for a reader: %d findings (owner %d), want the same with <data_dir> placeholders: %.600s", len(rr), len(fr), redacted.Raw)
	}
	if !strings.Contains(string(full.Raw), filepath.Dir(d.ConfigDir)) {
		t.Errorf("the owner's doctor names no path: %.400s", full.Raw)
	}
	for _, r := range gateway.New(gateway.Options{}).Routes() {
		method, pattern, _ := strings.Cut(r, " ")
		if method != "GET" || strings.HasPrefix(pattern, "/ws/") || pattern == "/acp" || pattern == "/api/events" ||
			strings.HasPrefix(pattern, "/ui/") || strings.HasPrefix(pattern, "/_app/") || strings.HasPrefix(pattern, "wss:") {
			continue
		}
		path := pattern
		for strings.Contains(path, "{") {
			i := strings.Index(path, "{")
			j := strings.Index(path[i:], "}")
			path = path[:i] + "nope" + path[i+j+1:]
		}
		path = strings.TrimSuffix(path, "{$}") + matrixQuery[pattern]
		res := g.Do("GET", path, nil, reader)
		if strings.Contains(string(res.Raw), filepath.Dir(d.ConfigDir)) {
			t.Errorf("GET %s (%d) names the install %s to a restricted device: %.400s", path, res.Code, d.ConfigDir, res.Raw)
		}
	}
}
