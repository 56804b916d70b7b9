package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPTypeScriptSDK runs tests/mcp-client/test.mjs: the official TypeScript MCP SDK's client (the library the
// MCP inspector is built on; the inspector's own CLI needs Node 22, CI's Debian has 20), pinned in its
// package-lock.json, drives `zeroclaw mcp serve` and the gateway's /mcp of the built binary: every tool listed
// and called on both transports, a device's missing grant refused, a bad token 401. .ci/run installs it.
func TestMCPTypeScriptSDK(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "tests", "mcp-client"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (it runs the MCP SDK test): install nodejs and npm, then npm ci --prefix tests/mcp-client: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the MCP SDK is not installed: run npm ci --prefix tests/mcp-client (%v)", err)
	}
	cfg := "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[gateway]\nport = 0\n\n[permission_profiles.reader]\ngrants = [\"memory:read\"]\n"
	h, root := homeWithConfig(t, cfg)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, filepath.Join(root, "data", "daemon.sock"))
	base, owner := pairWithBanner(t, d)
	code := strings.TrimSpace(runOK(t, env(h), "", "pair", "code", "--profile", "reader"))
	reader := pairCode(t, base, code)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "test.mjs", binary, base, owner, reader)
	cmd.Dir = dir
	cmd.Env = env(h)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node test.mjs: %v\n%s\n--- daemon stderr:\n%s", err, out, d.stderr.String())
	}
	for _, want := range []string{"stdio: every tool listed and called", "http: every tool listed and called", "refused with -32012", "a bad token is refused"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("node test.mjs did not report %q:\n%s", want, out)
		}
	}
	t.Logf("%s", out)
}

// pairCode pairs a device with code over POST /pair and returns its token.
func pairCode(t *testing.T, base, code string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/pair", nil)
	req.Header.Set("X-Pairing-Code", code)
	res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Token string }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 || body.Token == "" {
		t.Fatalf("pair with %q: %d %v", code, res.StatusCode, err)
	}
	return body.Token
}
