package rpctest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wssConfig enables [wss] on 127.0.0.1 with pki's server certificate (the harness binds a free port).
func wssConfig(pki testPKI) string {
	return gwBaseConfig + fmt.Sprintf("\n[wss]\nenabled = true\nbind = \"127.0.0.1\"\nport = 9781\ncert_path = %q\nkey_path = %q\n",
		pki.certPath, pki.kp)
}

// rpcWS is a native JSON-RPC client over one WebSocket: one message per frame.
type rpcWS struct {
	t  testing.TB
	c  *websocket.Conn
	id int
}

func dialWSS(t testing.TB, addr string, pki testPKI, hdr http.Header) (*rpcWS, int, error) {
	t.Helper()
	tr := &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pki.pool, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "wss://"+addr+"/", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}, HTTPHeader: hdr})
	if err != nil {
		code := 0
		if res != nil {
			code = res.StatusCode
		}
		return nil, code, err
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	c.SetReadLimit(16 << 20)
	return &rpcWS{t: t, c: c}, 101, nil
}

// call sends a request and reads frames until its response, returning it and the notifications before it.
func (r *rpcWS) call(method string, params any) (resp map[string]any, notes []map[string]any) {
	r.t.Helper()
	r.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(r.t.Context(), 20*time.Second)
	defer cancel()
	if err := r.c.Write(ctx, websocket.MessageText, b); err != nil {
		r.t.Fatalf("write %s: %v", method, err)
	}
	for {
		typ, data, err := r.c.Read(ctx)
		if err != nil {
			r.t.Fatalf("%s: read: %v", method, err)
		}
		if typ != websocket.MessageText || strings.HasSuffix(string(data), "\n") {
			r.t.Fatalf("frame is not one JSON text message: %q", data)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			r.t.Fatalf("frame %q: %v", data, err)
		}
		if id, ok := m["id"].(float64); ok && int(id) == r.id {
			return m, notes
		}
		notes = append(notes, m)
	}
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// The native protocol over the [wss] TLS listener: a paired token at the upgrade (401 without or with a bad
// one), the device principal, a streamed turn, and the upload methods and path attachments refused to a
// remote peer (protocol.md §7).
func TestWSSRoundTrip(t *testing.T) {
	pki := newPKI(t)
	d, g, code := startGateway(t, wssConfig(pki))
	auth := pairOnce(t, g, code)
	addr := d.WSSAddr(t)

	if _, st, err := dialWSS(t, addr, pki, nil); err == nil || st != 401 {
		t.Fatalf("no token: status %d, err %v; want 401", st, err)
	}
	if _, st, err := dialWSS(t, addr, pki, http.Header{"Authorization": {"Bearer zc_" + strings.Repeat("0", 64)}}); err == nil || st != 401 {
		t.Fatalf("bad token: status %d, err %v; want 401", st, err)
	}
	c, _, err := dialWSS(t, addr, pki, bearerHeader(auth))
	if err != nil {
		t.Fatal(err)
	}
	init, _ := c.call("initialize", map[string]any{"protocol_version": 1})
	res, _ := init["result"].(map[string]any)
	if res == nil || !strings.HasPrefix(res["principal_id"].(string), "device:") {
		t.Fatalf("initialize over wss: %v", init)
	}
	nw, _ := c.call("session/new", map[string]any{"agent_alias": "default"})
	sid, _ := nw["result"].(map[string]any)["session_id"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v", nw)
	}
	pr, notes := c.call("session/prompt", map[string]any{"session_id": sid, "prompt": "hello over wss"})
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
		r, _ := c.call(m, map[string]any{"session_id": sid, "size_bytes": 3, "upload_id": strings.Repeat("0", 32)})
		if errCode(r) != -32012 {
			t.Fatalf("%s over wss: %v, want -32012", m, r)
		}
	}
	r, _ := c.call("session/prompt", map[string]any{"session_id": sid, "prompt": "read this",
		"attachments": []map[string]any{{"path": pki.certPath}}})
	if errCode(r) != -32012 || !strings.Contains(fmt.Sprint(r["error"]), "path attachments") {
		t.Fatalf("path attachment over wss: %v, want -32012", r)
	}
}
