package gateway_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The gateway benchmarks compare a route of the real daemon's gateway with a bare net/http handler doing the
// same work (writing a JSON body of the same size), in the same run, 64 clients at once:
// go test -bench Gateway -run '^$' ./internal/rpctest/
//
//	BenchmarkGateway64/bare_health      the floor: net/http, no middleware, no domain call
//	BenchmarkGateway64/health           GET /health (security headers, metrics, timeout buffer, the health method)
//	BenchmarkGateway64/bare_sessions    net/http answering a session list of the same size
//	BenchmarkGateway64/api_sessions     GET /api/sessions with a bearer token (auth, the session/list method)
func BenchmarkGateway64(b *testing.B) {
	var banner rpctest.SyncBuf // the code reaches the owner on the daemon's terminal only
	d := rpctest.Start(b, rpctest.WithConfig(rpctest.GatewayConfig), rpctest.WithBanner(&banner))
	base := d.GatewayURL(b)
	g := rpctest.NewGateway(b, base)
	code := rpctest.BannerCode.FindStringSubmatch(banner.String())[1]
	token := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(b, 200).Body["token"].(string)
	health := g.Do("GET", "/health", nil).Want(b, 200).Raw
	sessions := g.Do("GET", "/api/sessions", nil, "Authorization: Bearer "+token).Want(b, 200).Raw

	bare := func(body []byte) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var v any
			_ = json.Unmarshal(body, &v) // the same JSON work as decoding a result and encoding it again
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		})}
		go func() { _ = srv.Serve(ln) }()
		b.Cleanup(func() { _ = srv.Close() })
		return "http://" + ln.Addr().String()
	}
	run := func(b *testing.B, url, auth string) {
		tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // 64 client goroutines
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest("GET", url, nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				res, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Errorf("status %d", res.StatusCode)
					return
				}
			}
		})
	}
	b.Run("bare_health", func(b *testing.B) { run(b, bare(health)+"/", "") })
	b.Run("health", func(b *testing.B) { run(b, base+"/health", "") })
	b.Run("bare_sessions", func(b *testing.B) { run(b, bare(sessions)+"/", "") })
	b.Run("api_sessions", func(b *testing.B) { run(b, base+"/api/sessions", "Bearer "+token) })
}
