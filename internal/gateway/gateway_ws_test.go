package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// dialStatus is the HTTP status of a refused upgrade of path.
func dialStatus(t testing.TB, base, path string, hdr http.Header) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+path, &websocket.DialOptions{HTTPHeader: hdr})
	if err == nil {
		_ = c.CloseNow()
		t.Fatalf("upgrade of %s succeeded, want a refusal", path)
	}
	if res == nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	return res.StatusCode
}

// A whole /ws/chat session: the token, the agent and the subprotocol at the upgrade, session_start, connect,
// the client errors with upstream's codes, and a turn whose tool call is approved over the socket.
func TestWSChatTurnWithApproval(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	base := d.GatewayURL(t)

	w := rpctest.DialWS(t, base, "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth),
		Subprotocols: []string{"zeroclaw.v1"}})
	if got := w.Conn.Subprotocol(); got != "zeroclaw.v1" {
		t.Fatalf("subprotocol %q, want zeroclaw.v1 echoed", got)
	}
	start := w.Next()
	sid, _ := start["session_id"].(string)
	if start["type"] != "session_start" || sid == "" || start["resumed"] != false || start["message_count"] != float64(0) {
		t.Fatalf("first frame %v", start)
	}
	w.Send(map[string]any{"type": "connect", "device_name": "phone"})
	if f := w.Next(); f["type"] != "connected" {
		t.Fatalf("connect answered %v", f)
	}
	w.SendRaw("{not json")
	w.WantError("INVALID_JSON")
	w.Send(map[string]any{"type": "dance"})
	w.WantError("UNKNOWN_MESSAGE_TYPE")
	w.Send(map[string]any{"type": "message", "content": "  "})
	w.WantError("EMPTY_CONTENT")
	w.Send(map[string]any{"type": "approval_response", "request_id": "x", "decision": "maybe"})
	w.WantError("INVALID_APPROVAL_RESPONSE")

	w.Send(map[string]any{"type": "message", "content": `/tool shell {"command": "touch approved.txt"}`})
	seen, req := w.Until("approval_request")
	if len(seen) != 1 || seen[0] != "tool_call" {
		t.Fatalf("before the approval request: %v", seen)
	}
	rid, _ := req["request_id"].(string)
	if rid == "" || req["tool"] != "shell" || !strings.Contains(req["arguments_summary"].(string), "touch approved.txt") {
		t.Fatalf("approval_request %v", req)
	}
	w.Send(map[string]any{"type": "approval_response", "request_id": rid, "decision": "approve"})
	seen, done := w.Until("done")
	if !slices.Contains(seen, "tool_result") || !slices.Contains(seen, "chunk") {
		t.Fatalf("turn frames %v", seen)
	}
	for _, k := range []string{"full_response", "input_tokens", "output_tokens", "tokens_used", "cost_usd", "model", "provider"} {
		if _, ok := done[k]; !ok {
			t.Fatalf("done lacks %s: %v", k, done)
		}
	}
	if done["provider"] != "echo" || done["full_response"] == "" {
		t.Fatalf("done %v", done)
	}
	// The shell ran in the agent's workspace once approved.
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "agents", "default", "workspace", "approved.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	// The session is the device's: it is listed over the API with its message.
	r := g.Do("GET", "/api/sessions/"+sid+"/messages", nil, auth).Want(t, 200)
	if !strings.Contains(string(r.Raw), "approved.txt") {
		t.Fatalf("messages %s", r.Raw)
	}

	// Reconnecting with session_id resumes it.
	w2 := rpctest.DialWS(t, base, "/ws/chat?agent_alias=default&session_id="+sid, &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	if f := w2.Next(); f["session_id"] != sid || f["resumed"] != true || f["message_count"].(float64) < 2 {
		t.Fatalf("resumed session_start %v", f)
	}
}

// A refused upgrade is answered before it happens: 401 without a valid token, 400 without or with an unknown
// agent; the token may also come as ?token=.
func TestWSChatRefusedBeforeUpgrade(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	base := d.GatewayURL(t)
	if s := dialStatus(t, base, "/ws/chat?agent=default", nil); s != 401 {
		t.Fatalf("no token: %d, want 401", s)
	}
	if s := dialStatus(t, base, "/ws/chat?agent=default&token=zc_"+strings.Repeat("0", 64), nil); s != 401 {
		t.Fatalf("bad token: %d, want 401", s)
	}
	if s := dialStatus(t, base, "/ws/chat", rpctest.BearerHeader(auth)); s != 400 {
		t.Fatalf("no agent: %d, want 400", s)
	}
	if s := dialStatus(t, base, "/ws/chat?agent=nobody", rpctest.BearerHeader(auth)); s != 400 {
		t.Fatalf("unknown agent: %d, want 400", s)
	}
	if s := dialStatus(t, base, "/acp?agent=nobody", rpctest.BearerHeader(auth)); s != 400 {
		t.Fatalf("/acp unknown agent: %d, want 400", s)
	}
	if s := dialStatus(t, base, "/acp", nil); s != 401 {
		t.Fatalf("/acp no token: %d, want 401", s)
	}
	tok := strings.TrimPrefix(auth, "Authorization: Bearer ")
	w := rpctest.DialWS(t, base, "/ws/chat?agent=default&token="+tok, nil)
	if f := w.Next(); f["type"] != "session_start" {
		t.Fatalf("first frame %v", f)
	}
}

// Messages sent while a turn waits are queued behind it up to the steering depth; one more is refused with
// STEERING_QUEUE_FULL. Aborting the turn (POST /api/sessions/{id}/abort) answers aborted, then the queued
// messages run in order.
func TestWSChatSteeringQueueAndAbort(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	w := rpctest.DialWS(t, d.GatewayURL(t), "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	sid := w.Next()["session_id"].(string)
	w.Send(map[string]any{"type": "message", "content": `/tool shell {"command": "touch never.txt"}`})
	w.Until("approval_request") // the turn now waits for an answer
	for i := range 8 {
		w.Send(map[string]any{"type": "message", "content": "queued " + string(rune('a'+i))})
	}
	w.Send(map[string]any{"type": "message", "content": "one too many"})
	w.WantError("STEERING_QUEUE_FULL")
	g.Do("POST", "/api/sessions/"+sid+"/abort", nil, auth).Want(t, 200)
	if seen, _ := w.Until("aborted"); slices.Contains(seen, "done") {
		t.Fatalf("frames before aborted: %v", seen)
	}
	for i := range 8 {
		_, done := w.Until("done")
		if want := "queued " + string(rune('a'+i)); !strings.Contains(done["full_response"].(string), want) {
			t.Fatalf("turn %d answered %q, want the echo of %q", i, done["full_response"], want)
		}
	}
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "agents", "default", "workspace", "never.txt")); err == nil {
		t.Fatal("the aborted turn's command ran")
	}
}

// The token may come as a bearer.<token> subprotocol (zeroclaw.v1 is still the one echoed); once the device's
// grants lack sessions:execute, an open socket's next message is refused (FORBIDDEN), a new upgrade gets 403,
// and an ACP device without sessions:create gets -32012 from session/new.
func TestWSChatSubprotocolTokenAndGrants(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+`
[permission_profiles.viewer]
grants = ["status:read"]
`)
	auth := rpctest.PairOnce(t, g, code)
	tok := strings.TrimPrefix(auth, "Authorization: Bearer ")
	base := d.GatewayURL(t)
	w := rpctest.DialWS(t, base, "/ws/chat?agent=default", &websocket.DialOptions{Subprotocols: []string{"bearer." + tok, "zeroclaw.v1"}})
	if w.Conn.Subprotocol() != "zeroclaw.v1" {
		t.Fatalf("subprotocol %q", w.Conn.Subprotocol())
	}
	if f := w.Next(); f["type"] != "session_start" {
		t.Fatalf("first frame %v", f)
	}

	c := d.Dial(t)
	c.Initialize()
	c.Send(`{"jsonrpc":"2.0","method":"config/set","params":{"prop":"gateway.device_permission_profiles","value":["viewer"]},"id":2}`)
	if r := c.MustRecv(); !strings.Contains(r, `"result"`) {
		t.Fatalf("config/set: %s", r)
	}
	// The open socket's next turn is checked against the grants now in force.
	w.Send(map[string]any{"type": "message", "content": "hello"})
	w.WantError("FORBIDDEN")
	if s := dialStatus(t, base, "/ws/chat?agent=default", rpctest.BearerHeader(auth)); s != 403 {
		t.Fatalf("a device without sessions:execute: %d, want 403", s)
	}
	a := rpctest.DialWS(t, base, "/acp", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	a.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	if f := a.Next(); fmt.Sprint(f["error"]) == "<nil>" || f["error"].(map[string]any)["code"] != float64(-32012) {
		t.Fatalf("acp session/new by a viewer device: %v, want -32012", f)
	}
}

// An approval nobody answers is denied when the agent's approval timeout passes: the tool does not run and the
// turn still ends with done. A frame over the limit closes the socket with 1009.
func TestWSChatApprovalTimeoutAndFrameLimit(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+`
[agents.short]
model_provider = "echo.default"
risk_profile = "quick"

[risk_profiles.quick]
level = "supervised"
approval_timeout_secs = 1
`)
	auth := rpctest.PairOnce(t, g, code)
	w := rpctest.DialWS(t, d.GatewayURL(t), "/ws/chat?agent=short", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	w.Next()
	w.Send(map[string]any{"type": "message", "content": `/tool shell {"command": "touch timed_out.txt"}`})
	_, req := w.Until("approval_request")
	if req["timeout_secs"] != float64(1) {
		t.Fatalf("approval_request %v", req)
	}
	_, res := w.Until("tool_result")
	if out, _ := res["output"].(string); !strings.Contains(strings.ToLower(out), "denied") && !strings.Contains(strings.ToLower(out), "timed out") {
		t.Fatalf("tool_result after the timeout: %v", res)
	}
	w.Until("done")
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "agents", "short", "workspace", "timed_out.txt")); err == nil {
		t.Fatal("the unanswered command ran")
	}

	// An oversized frame (8x the limit) is written whole, then answered with 1009: the gateway skips the
	// remainder during its close handshake instead of resetting a client that is still writing.
	w.SendRaw(`{"type":"message","content":"` + strings.Repeat("x", 2<<20) + `"}`)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		if _, _, err := w.Conn.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
				t.Fatalf("an oversized frame ended the socket with %v, want 1009", err)
			}
			break
		}
	}
}

// /acp's ?agent= is the default agent of session/new (the session lives in that agent's workspace); a client
// that names another agent gets that one.
func TestACPWebSocketDefaultAgent(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+`
[agents.other]
model_provider = "echo.default"
risk_profile = "supervised"
`)
	auth := rpctest.PairOnce(t, g, code)
	a := rpctest.DialWS(t, d.GatewayURL(t), "/acp?agent=other", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth),
		Subprotocols: []string{"zeroclaw.acp.v1"}})
	if a.Conn.Subprotocol() != "zeroclaw.acp.v1" {
		t.Fatalf("subprotocol %q", a.Conn.Subprotocol())
	}
	a.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	a.Next()
	workspace := func(params string) string {
		t.Helper()
		a.SendRaw(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":` + params + `}`)
		f := a.Next()
		res, _ := f["result"].(map[string]any)
		if res == nil {
			t.Fatalf("session/new: %v", f)
		}
		return res["workspaceDir"].(string)
	}
	if w := workspace(`{"mcpServers":[]}`); !strings.HasSuffix(w, filepath.Join("agents", "other", "workspace")) {
		t.Fatalf("session/new without an agent: workspace %s, want the workspace of agent other", w)
	}
	if w := workspace(`{"mcpServers":[],"agent":"default"}`); !strings.HasSuffix(w, filepath.Join("agents", "default", "workspace")) {
		t.Fatalf("session/new naming agent default: workspace %s", w)
	}
}

// /ws/chat pings every gateway.websocket_ping_interval_secs: a raw client (no library answering pings for it)
// sees a ping control frame after session_start.
func TestWSChatPings(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nwebsocket_ping_interval_secs = 1\n")
	auth := rpctest.PairOnce(t, g, code)
	nc, err := net.Dial("tcp", strings.TrimPrefix(d.GatewayURL(t), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(nc, "GET /ws/chat?agent=default HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n%s\r\n\r\n", auth)
	br := bufio.NewReader(nc)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", res, err)
	}
	var opcodes []byte
	for len(opcodes) < 10 {
		var hdr [2]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			t.Fatalf("no ping within the deadline; frames %v: %v", opcodes, err)
		}
		n := int(hdr[1] & 0x7f)
		switch n {
		case 126:
			var ext [2]byte
			_, _ = io.ReadFull(br, ext[:])
			n = int(ext[0])<<8 | int(ext[1])
		case 127:
			t.Fatal("unexpectedly large frame")
		}
		if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
			t.Fatal(err)
		}
		op := hdr[0] & 0x0f
		opcodes = append(opcodes, op)
		if op == 0x9 {
			if opcodes[0] != 0x1 {
				t.Fatalf("frames %v: the first is not session_start's text frame", opcodes)
			}
			return
		}
	}
	t.Fatalf("frames %v carry no ping", opcodes)
}
