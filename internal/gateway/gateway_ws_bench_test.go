package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// BenchmarkWSChatFirstChunk measures /ws/chat's time to first chunk (ttfc-ns; ns/op is the whole turn up to
// done) on the real daemon with the echo provider, next to a bare net/http + coder/websocket handler that does
// the frame work of a turn without a session: decode the message, send a chunk, send done.
//
//	go test -bench WSChat -run '^$' ./internal/rpctest/
func BenchmarkWSChatFirstChunk(b *testing.B) {
	var banner rpctest.SyncBuf // the code reaches the owner on the daemon's terminal only
	d := rpctest.Start(b, rpctest.WithConfig(rpctest.GatewayConfig), rpctest.WithBanner(&banner))
	base := d.GatewayURL(b)
	g := rpctest.NewGateway(b, base)
	code := rpctest.BannerCode.FindStringSubmatch(banner.String())[1]
	token := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(b, 200).Body["token"].(string)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		send := func(v any) error {
			js, _ := json.Marshal(v)
			return c.Write(r.Context(), websocket.MessageText, js)
		}
		_ = send(map[string]any{"type": "session_start", "session_id": "bare", "resumed": false, "message_count": 0})
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var m struct{ Type, Content string }
			_ = json.Unmarshal(data, &m)
			_ = send(map[string]any{"type": "chunk", "content": m.Content})
			if send(map[string]any{"type": "done", "full_response": m.Content, "input_tokens": 0, "output_tokens": 0,
				"tokens_used": 0, "cost_usd": nil, "model": "echo", "provider": "echo"}) != nil {
				return
			}
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })

	run := func(b *testing.B, url string, hdr http.Header) {
		ctx, cancel := context.WithCancel(b.Context())
		defer cancel()
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		if _, _, err := c.Read(ctx); err != nil { // session_start
			b.Fatal(err)
		}
		msg := []byte(`{"type":"message","content":"hello"}`)
		var ttfc time.Duration
		b.ResetTimer()
		for b.Loop() {
			start := time.Now()
			if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
				b.Fatal(err)
			}
			first := true
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var f struct{ Type string }
				_ = json.Unmarshal(data, &f)
				if f.Type == "chunk" && first {
					ttfc += time.Since(start)
					first = false
				}
				if f.Type == "done" {
					break
				}
				if f.Type == "error" {
					b.Fatalf("turn failed: %s", data)
				}
			}
		}
		b.ReportMetric(float64(ttfc.Nanoseconds())/float64(b.N), "ttfc-ns")
	}
	b.Run("bare", func(b *testing.B) { run(b, "ws://"+ln.Addr().String()+"/", nil) })
	b.Run("ws_chat", func(b *testing.B) {
		run(b, "ws"+base[len("http"):]+"/ws/chat?agent=default", http.Header{"Authorization": {"Bearer " + token}})
	})
}
