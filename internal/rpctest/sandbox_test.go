package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// chatGrants are the grants of a principal that may only chat: open, run and read its own sessions.
const chatGrants = `["sessions:create", "sessions:execute", "sessions:read"]`

// secretKeyOf makes sure the install has a .secret_key and returns its content.
func secretKeyOf(t *testing.T, d *Daemon) string {
	t.Helper()
	p := filepath.Join(d.ConfigDir, ".secret_key")
	if b, err := os.ReadFile(p); err == nil {
		return string(b)
	}
	key := strings.Repeat("5e", 32)
	if err := os.WriteFile(p, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return key
}

// sandboxTool runs "/tool name args" (the echo provider's tool hook) in session sid and returns the tool's result.
func sandboxTool(t *testing.T, c *rc, sid, name string, args map[string]any) api.SessionUpdate {
	t.Helper()
	raw, _ := json.Marshal(args)
	tr := c.prompt(sid, "/tool "+name+" "+string(raw), hooks{})
	if tr.err != nil {
		t.Fatalf("prompt %s: %v", name, tr.err)
	}
	for _, ev := range tr.events {
		if ev.Type == api.UpdateToolResult {
			return ev
		}
	}
	t.Fatalf("%s: no tool_result in %+v", name, tr.events)
	return api.SessionUpdate{}
}

func toolOut(ev api.SessionUpdate) string {
	if ev.RawOutput == nil {
		return ""
	}
	return *ev.RawOutput
}

// The attack of issue 20 item 3, over the socket: a principal with only session grants opens an ACP session
// with cwd "/" (or any directory outside the agent's workspace, even one the owner allowed): -32602 saying only
// the owner may. In a session in the agent's workspace, even under the full level, its model's file tools reach
// nothing of the install root: not by absolute path, "..", nor a symlink planted in the workspace.
func TestACPCwdOutsideWorkspaceIsTheOwners(t *testing.T) {
	t.Parallel()
	allowed := ShortTempDir(t)
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf(`
[acp]
allowed_roots = [%q]

[permission_profiles.chat]
grants = %s

[users.alice]
uid = %d
permission_profiles = ["chat"]
`, allowed, chatGrants, os.Getuid()))))
	key := secretKeyOf(t, d)
	c := dialRC(t, d, "")
	for _, cwd := range []string{"/", allowed, "/etc", "/root"} {
		_, werr := c.call(api.MethodSessionNew, api.SessionNewParams{ChatMode: api.ChatModeACP, Cwd: cwd})
		if werr == nil || werr.Code != api.CodeInvalidParams || !strings.Contains(werr.Message, "only the owner") {
			t.Fatalf("alice's session/new {chat_mode:acp, cwd:%q} = %v, want -32602 (only the owner)", cwd, werr)
		}
	}
	s := c.newSession(api.SessionNewParams{ChatMode: api.ChatModeACP})
	ws := s.WorkspaceDir
	if !strings.HasSuffix(ws, filepath.Join("agents", "a", "workspace")) {
		t.Fatalf("workspace %s, want the agent's", ws)
	}
	if err := os.Symlink(d.ConfigDir, filepath.Join(ws, "root-link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(d.ConfigDir, ".secret_key"),
		"../../../.secret_key",
		"../../../config.toml",
		"root-link/.secret_key",
		filepath.Join(d.ConfigDir, "data", "sessions", "sessions.db"),
	} {
		ev := sandboxTool(t, c, s.SessionID, "file_read", map[string]any{"path": p})
		if !ev.IsError || !strings.Contains(toolOut(ev), "install root") || strings.Contains(toolOut(ev), key) {
			t.Fatalf("file_read %s = %q (error %v), want refused: the install root", p, toolOut(ev), ev.IsError)
		}
	}
	for _, p := range []string{"../../..", "root-link/data"} {
		if ev := sandboxTool(t, c, s.SessionID, "file_list", map[string]any{"path": p}); !ev.IsError || !strings.Contains(toolOut(ev), "install root") {
			t.Fatalf("file_list %s = %q, want refused", p, toolOut(ev))
		}
	}
	if ev := sandboxTool(t, c, s.SessionID, "file_write", map[string]any{"path": "../../../config.toml", "content": "x"}); !ev.IsError {
		t.Fatalf("file_write config.toml = %q, want refused", toolOut(ev))
	}
	if b, _ := os.ReadFile(filepath.Join(d.ConfigDir, ".secret_key")); string(b) != key {
		t.Fatal(".secret_key changed")
	}

	// The same over the ACP endpoint that `zeroclaw acp` bridges to.
	a := ndjson.Dial(t, filepath.Join(d.ConfigDir, "data", "acp.sock"))
	a.Call("initialize", map[string]any{"protocolVersion": 1}, 1)
	m := a.Call("session/new", map[string]any{"cwd": "/", "mcpServers": []any{}}, 2)
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(api.CodeInvalidParams) || !strings.Contains(fmt.Sprint(e["message"]), "only the owner") {
		t.Fatalf("ACP session/new cwd / by alice = %v, want -32602 (only the owner)", m)
	}
}

// The owner may choose a cwd outside the agent's workspace only below [acp] allowed_roots, never inside the
// install root; and even in a cwd that contains the install root, the file tools do not reach it.
func TestACPOwnerCwdNeedsAllowedRoots(t *testing.T) {
	t.Parallel()
	home := ShortTempDir(t)
	allowed := filepath.Join(home, "projects")
	if err := os.MkdirAll(filepath.Join(allowed, "p"), 0o700); err != nil {
		t.Fatal(err)
	}
	install := filepath.Join(home, ".zeroclaw")
	if err := os.MkdirAll(install, 0o700); err != nil {
		t.Fatal(err)
	}
	d := StartOn(t, install, WithConfig(agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf("\n[acp]\nallowed_roots = [%q, %q]\n", allowed, home))))
	key := secretKeyOf(t, d)
	c := dialRC(t, d, "")
	for cwd, want := range map[string]string{
		"/":                               "below none of [acp] allowed_roots",
		"/etc":                            "below none of [acp] allowed_roots",
		filepath.Join(install, "data"):    "inside the daemon's install root",
		filepath.Join(allowed, "p", ".."): "",
	} {
		res, werr := c.call(api.MethodSessionNew, api.SessionNewParams{ChatMode: api.ChatModeACP, Cwd: cwd})
		if want == "" {
			if werr != nil {
				t.Fatalf("owner cwd %s: %v", cwd, werr)
			}
			continue
		}
		if werr == nil || werr.Code != api.CodeInvalidParams || !strings.Contains(werr.Message, want) {
			t.Fatalf("owner cwd %s = %s %v, want -32602 (%s)", cwd, res, werr, want)
		}
	}
	s := c.newSession(api.SessionNewParams{ChatMode: api.ChatModeACP, Cwd: home})
	if s.WorkspaceDir != canonPath(t, home) {
		t.Fatalf("workspace %s, want %s", s.WorkspaceDir, home)
	}
	for _, p := range []string{".zeroclaw/.secret_key", ".zeroclaw/config.toml"} {
		ev := sandboxTool(t, c, s.SessionID, "file_read", map[string]any{"path": p})
		if !ev.IsError || strings.Contains(toolOut(ev), key) {
			t.Fatalf("owner session in %s: file_read %s = %q, want refused", home, p, toolOut(ev))
		}
	}
	if ev := sandboxTool(t, c, s.SessionID, "file_list", map[string]any{"path": ".zeroclaw"}); !ev.IsError {
		t.Fatalf("file_list .zeroclaw = %q, want refused", toolOut(ev))
	}

	// Without allowed_roots the owner's cwd outside the workspace is refused with the hint.
	d2 := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	c2 := dialRC(t, d2, "")
	if _, werr := c2.call(api.MethodSessionNew, api.SessionNewParams{ChatMode: api.ChatModeACP, Cwd: allowed}); werr == nil ||
		werr.Code != api.CodeInvalidParams || !strings.Contains(werr.Message, "allowed_roots is empty") {
		t.Fatalf("owner cwd without allowed_roots = %v, want -32602 naming allowed_roots", werr)
	}
}

func canonPath(t *testing.T, p string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Over the gateway's /acp WebSocket, a paired device with a restricted profile (session grants only) cannot
// move its session to "/" either.
func TestACPWebSocketRestrictedDeviceCwd(t *testing.T) {
	t.Parallel()
	d, g, code := StartGateway(t, GatewayConfig+fmt.Sprintf(`
[permission_profiles.chat]
grants = %s

[gateway]
device_permission_profiles = ["chat"]
`, chatGrants))
	auth := PairOnce(t, g, code)
	a := DialWS(t, d.GatewayURL(t), "/acp", &websocket.DialOptions{HTTPHeader: BearerHeader(auth)})
	a.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	a.Next()
	a.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	f := a.Next()
	e, _ := f["error"].(map[string]any)
	if e == nil || e["code"] != float64(api.CodeInvalidParams) || !strings.Contains(fmt.Sprint(e["message"]), "only the owner") {
		t.Fatalf("/acp session/new cwd / by a restricted device = %v, want -32602 (only the owner)", f)
	}
	a.SendRaw(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"mcpServers":[]}}`)
	if f := a.Next(); f["result"] == nil {
		t.Fatalf("session/new in the agent's workspace: %v", f)
	}
}
