package rpctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Inline env and header secrets of [[mcp.servers]], written in plaintext, are enc2: on disk after the next save
// and masked on every surface, even when the servers themselves echo them back: config/get (whole and the
// mcp.servers property), the dashboard's GET /api/config and /api/config/list, agents/status, doctor/run, the
// daemon's log and the persisted event log. Each surface is first shown to carry the server's failure, so the
// absence of the secret is not the absence of the text.
func TestMCPSecretsMaskedEverywhere(t *testing.T) {
	t.Parallel()
	const envSecret, hdrSecret = "zc-env-SECRET-0123456789", "zc-hdr-SECRET-9876543210"
	echoBack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad credentials: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	t.Cleanup(echoBack.Close)
	var logs lockedBuf
	cfg := rpctestGatewayMCP(envSecret, hdrSecret, echoBack.URL)
	d, g, code := StartGateway(t, cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	owner := PairOnce(t, g, code)
	c := dialRC(t, d, "")

	// Both servers fail, each echoing its secret: wait for the failures to be recorded.
	var st api.AgentsStatusResult
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mustCall(api.MethodAgentsStatus, map[string]any{}, &st)
		raw, _ := json.Marshal(st)
		if strings.Count(string(raw), `"backoff"`) >= 2 && strings.Contains(string(raw), "leaked=") && strings.Contains(string(raw), "Unauthorized") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the servers' failures were not recorded: %s", raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.mustCall(api.MethodConfigSet, map[string]any{"prop": "agents.default.system_prompt", "value": "be brief"}, nil)

	surfaces := map[string]string{}
	raw, _ := json.Marshal(st)
	surfaces["agents/status"] = string(raw)
	var all, prop json.RawMessage
	c.mustCall(api.MethodConfigGet, map[string]any{}, &all)
	c.mustCall(api.MethodConfigGet, map[string]any{"prop": "mcp.servers"}, &prop)
	surfaces["config/get"], surfaces["config/get mcp.servers"] = string(all), string(prop)
	surfaces["GET /api/config"] = string(g.Do("GET", "/api/config", nil, owner).Want(t, 200).Raw)
	surfaces["GET /api/config/list"] = string(g.Do("GET", "/api/config/list", nil, owner).Want(t, 200).Raw)
	var doc json.RawMessage
	c.mustCall(api.MethodDoctorRun, map[string]any{}, &doc)
	surfaces["doctor/run"] = string(doc)
	surfaces["daemon log"] = logs.String()
	trace, _ := os.ReadFile(filepath.Join(d.ConfigDir, "data", "state", "runtime-trace.jsonl"))
	surfaces["runtime-trace.jsonl"] = string(trace)
	disk, err := os.ReadFile(filepath.Join(d.ConfigDir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	surfaces["config.toml"] = string(disk)

	for name, text := range surfaces {
		if strings.Contains(text, "SECRET-") {
			i := strings.Index(text, "SECRET-")
			t.Errorf("%s carries a secret: ...%s...", name, text[max(0, i-120):min(len(text), i+40)])
		}
	}
	for name, want := range map[string]string{"agents/status": "leaked=", "doctor/run": "is down", "daemon log": "mcp server down",
		"GET /api/config": "mcp", "config/get mcp.servers": "ZC_TOKEN"} {
		if !strings.Contains(surfaces[name], want) {
			t.Errorf("%s lacks %q (the surface was not exercised): %.400s", name, want, surfaces[name])
		}
	}
	if strings.Count(string(disk), `"enc2:`) < 2 {
		t.Errorf("config.toml after a save holds %d enc2: values:\n%s", strings.Count(string(disk), `"enc2:`), disk)
	}
}

func rpctestGatewayMCP(envSecret, hdrSecret, url string) string {
	return strings.Replace(GatewayConfig, "[agents.default]\n", "[agents.default]\nmcp_bundles = [\"all\"]\n", 1) + fmt.Sprintf(`
[observability]
log_persistence = "full"

[mcp]
enabled = true

[[mcp.servers]]
name = "bad"
command = "sh"
args = ["-c", "echo leaked=$ZC_TOKEN >&2; exit 3"]
start = "eager"
env = { ZC_TOKEN = %q }

[[mcp.servers]]
name = "web"
transport = "http"
url = %q
start = "eager"
headers = { Authorization = "Bearer %s" }

[mcp_bundles.all]
servers = ["bad", "web"]
`, envSecret, url, hdrSecret)
}
