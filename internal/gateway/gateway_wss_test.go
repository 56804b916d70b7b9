package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// The native protocol over the [wss] TLS listener: a paired token at the upgrade (401 without or with a bad
// one), the device principal, a streamed turn, and the upload methods and path attachments refused to a
// remote peer (protocol.md §7).
func TestWSSRoundTrip(t *testing.T) {
	t.Parallel()
	pki := rpctest.NewPKI(t)
	d, g, code := rpctest.StartGateway(t, rpctest.WSSConfig(pki))
	auth := rpctest.PairOnce(t, g, code)
	addr := d.WSSAddr(t)

	if _, st, err := rpctest.DialWSS(t, addr, pki, nil); err == nil || st != 401 {
		t.Fatalf("no token: status %d, err %v; want 401", st, err)
	}
	if _, st, err := rpctest.DialWSS(t, addr, pki, http.Header{"Authorization": {"Bearer zc_" + strings.Repeat("0", 64)}}); err == nil || st != 401 {
		t.Fatalf("bad token: status %d, err %v; want 401", st, err)
	}
	c, _, err := rpctest.DialWSS(t, addr, pki, rpctest.BearerHeader(auth))
	if err != nil {
		t.Fatal(err)
	}
	init, _ := c.Call("initialize", map[string]any{"protocol_version": 1})
	res, _ := init["result"].(map[string]any)
	if res == nil || !strings.HasPrefix(res["principal_id"].(string), "device:") {
		t.Fatalf("initialize over wss: %v", init)
	}
	// The connection is listed with the wss transport and its peer label.
	tl, _ := c.Call("tui/list", map[string]any{})
	tuis, _ := tl["result"].(map[string]any)["tuis"].([]any)
	if len(tuis) != 1 || tuis[0].(map[string]any)["transport"] != "wss" ||
		!strings.HasPrefix(tuis[0].(map[string]any)["peer_label"].(string), "wss:127.0.0.1:") {
		t.Fatalf("tui/list over wss: %v", tl)
	}
	nw, _ := c.Call("session/new", map[string]any{"agent_alias": "default"})
	sid, _ := nw["result"].(map[string]any)["session_id"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v", nw)
	}
	pr, notes := c.Call("session/prompt", map[string]any{"session_id": sid, "prompt": "hello over wss"})
	if out, _ := pr["result"].(map[string]any); out == nil || out["outcome"] != "completed" || !strings.Contains(out["content"].(string), "hello over wss") {
		t.Fatalf("session/prompt: %v", pr)
	}
	var chunks strings.Builder
	kinds := []string{}
	for _, n := range notes {
		p, _ := n["params"].(map[string]any)
		if n["method"] != "session/update" || p["session_id"] != sid {
			t.Fatalf("notification %v", n)
		}
		kinds = append(kinds, p["type"].(string))
		if p["type"] == "agent_message_chunk" {
			chunks.WriteString(p["text"].(string))
		}
	}
	if !strings.Contains(chunks.String(), "hello over wss") || kinds[len(kinds)-1] != "turn_complete" {
		t.Fatalf("streamed %q in %v", chunks.String(), kinds)
	}

	for _, m := range []string{"file/upload/begin", "file/upload/chunk", "file/upload/commit"} {
		r, _ := c.Call(m, map[string]any{"session_id": sid, "size_bytes": 3, "upload_id": strings.Repeat("0", 32)})
		if errCode(r) != -32012 {
			t.Fatalf("%s over wss: %v, want -32012", m, r)
		}
	}
	r, _ := c.Call("session/prompt", map[string]any{"session_id": sid, "prompt": "read this",
		"attachments": []map[string]any{{"path": pki.CertPath}}})
	if errCode(r) != -32012 || !strings.Contains(fmt.Sprint(r["error"]), "path attachments") {
		t.Fatalf("path attachment over wss: %v, want -32012", r)
	}
}

// A daemon stopped while a /ws/chat turn waits for an approval and /acp and [wss] clients are connected stops
// cleanly: every client sees its socket end and no goroutine is left behind.
func TestWebSocketsEndAtShutdown(t *testing.T) {
	t.Parallel() // the leak check counts this daemon's goroutines only
	pki := rpctest.NewPKI(t)
	d, g, code := rpctest.StartGateway(t, rpctest.WSSConfig(pki))
	auth := rpctest.PairOnce(t, g, code)
	base := d.GatewayURL(t)
	chat := rpctest.DialWS(t, base, "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	chat.Next()
	chat.Send(map[string]any{"type": "message", "content": `/tool shell {"command": "touch x"}`})
	chat.Until("approval_request")
	acpc := rpctest.DialWS(t, base, "/acp?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	acpc.SendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if f := acpc.Next(); f["result"] == nil {
		t.Fatalf("acp initialize: %v", f)
	}
	rc, _, err := rpctest.DialWSS(t, d.WSSAddr(t), pki, rpctest.BearerHeader(auth))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := rc.Call("initialize", map[string]any{"protocol_version": 1}); r["result"] == nil {
		t.Fatalf("wss initialize: %v", r)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*websocket.Conn{"chat": chat.Conn, "acp": acpc.Conn, "wss": rc.Conn} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		for {
			if _, _, err := c.Read(ctx); err != nil {
				if ctx.Err() != nil {
					t.Fatalf("%s: the socket stayed open after the daemon stopped", name)
				}
				break
			}
		}
		cancel()
		_ = c.CloseNow()
	}
	d.CheckNoGoroutines(t)
}

// [wss] follows the config: off at start, on after config/set + reload, its certificate swapped in place
// when cert_path changes, and a revoked token refused at the connection's next request (-32010).
func TestWSSReloadAndRevocation(t *testing.T) {
	t.Parallel()
	pki := rpctest.NewPKI(t)
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	c := d.Dial(t)
	c.Initialize()
	set := func(prop string, v any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"prop": prop, "value": v})
		c.Send(`{"jsonrpc":"2.0","method":"config/set","params":` + string(b) + `,"id":7}`)
		if r := c.MustRecv(); !strings.Contains(r, `"result"`) {
			t.Fatalf("config/set %s: %s", prop, r)
		}
	}
	set("wss.cert_path", pki.CertPath)
	set("wss.key_path", pki.KeyPath)
	set("wss.bind", "127.0.0.1")
	set("wss.enabled", true)
	rc, _, err := rpctest.DialWSS(t, d.WSSAddr(t), pki, rpctest.BearerHeader(auth))
	if err != nil {
		t.Fatalf("wss after enabling it: %v", err)
	}
	if r, _ := rc.Call("initialize", map[string]any{"protocol_version": 1}); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}

	// A new certificate from another CA at another path: the listener keeps its address and serves it.
	other := rpctest.NewPKI(t)
	addr := d.WSSAddr(t)
	set("wss.key_path", other.KeyPath)
	set("wss.cert_path", other.CertPath)
	if d.WSSAddr(t) != addr {
		t.Fatalf("the listener moved from %s to %s on a certificate change", addr, d.WSSAddr(t))
	}
	if _, _, err := rpctest.DialWSS(t, addr, pki, rpctest.BearerHeader(auth)); err == nil {
		t.Fatal("the old CA still verifies the listener: the certificate was not swapped")
	}
	if _, _, err := rpctest.DialWSS(t, addr, other, rpctest.BearerHeader(auth)); err != nil {
		t.Fatalf("the new certificate: %v", err)
	}

	// Revoking the device ends what its open connection may do.
	id := g.Do("GET", "/api/devices", nil, auth).Want(t, 200)
	devs, _ := id.Body["devices"].([]any)
	if len(devs) != 1 {
		t.Fatalf("devices %s", id.Raw)
	}
	g.Do("DELETE", "/api/devices/"+devs[0].(map[string]any)["id"].(string), nil, auth).Want(t, 200)
	if r, _ := rc.Call("status", map[string]any{}); errCode(r) != -32010 {
		t.Fatalf("status after the token was revoked: %v, want -32010", r)
	}
}
