package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestACPPublicSDK runs tests/acp-sdk/test.mjs: the public ACP client SDK (@agentclientprotocol/sdk, pinned in
// its package-lock.json) drives the built binary's `zeroclaw acp` for a whole session, then a second process
// loads it. Node and the SDK are test dependencies: .ci/run installs them.
func TestACPPublicSDK(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "tests", "acp-sdk"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (it runs the ACP SDK test): install nodejs and npm, then npm ci --prefix tests/acp-sdk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the ACP SDK is not installed: run npm ci --prefix tests/acp-sdk (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "test.mjs", binary)
	cmd.Dir = dir
	cmd.Env = env(home(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node test.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// `zeroclaw acp` with no daemon running starts an ephemeral one, answers on stdout with protocol frames only
// (ids echoed, id 0 included), and exits 0 at the end of its input.
func TestACPBridgeStdoutIsProtocolOnly(t *testing.T) {
	t.Parallel()
	h, root := homeWithOpenAI(t, "fake", "http://127.0.0.1:1/v1")
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":"x","method":"session/set_mode","params":{}}` + "\n"
	stdout, stderr, code := run(t, env(h), in, "acp")
	if code != 0 {
		t.Fatalf("zeroclaw acp exited %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,`) ||
		lines[1] != `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Unknown method: session/set_mode"}}` {
		t.Fatalf("stdout is not exactly the two answers:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(root, "data", "daemon-ephemeral.log")); err != nil {
		t.Errorf("no ephemeral daemon was started: %v", err)
	}
}

// TestACPOverGatewayWebSocket runs tests/acp-sdk/ws.mjs: the public ACP client SDK, its Stream adapted to
// WebSocket frames, drives the built binary's gateway /acp (subprotocol zeroclaw.acp.v1) with a token paired
// over HTTP: a bad token is refused, a prompt streams and a tool call is allowed through request_permission.
func TestACPOverGatewayWebSocket(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "tests", "acp-sdk"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (it runs the ACP SDK test): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws", "package.json")); err != nil {
		t.Fatalf("the test's npm packages are not installed: run npm ci --prefix tests/acp-sdk (%v)", err)
	}
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The editor's project lies outside the agent's workspace: the owner (an unrestricted device) may open it
	// because [acp] allowed_roots lists it.
	cfg := "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[gateway]\nport = 0\n\n[acp]\nallowed_roots = [" + strconv.Quote(project) + "]\n"
	h, root := homeWithConfig(t, cfg)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, filepath.Join(root, "data", "daemon.sock"))
	base, token := pairWithBanner(t, d)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "ws.mjs", "ws"+strings.TrimPrefix(base, "http")+"/acp?agent=default", token, project)
	cmd.Dir = dir
	cmd.Env = env(h)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node ws.mjs: %v\n%s\n--- daemon stderr:\n%s", err, out, d.stderr.String())
	}
	t.Logf("%s", out)
}
