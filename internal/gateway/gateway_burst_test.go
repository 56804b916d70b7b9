package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// 2,000 requests from 50 clients at once, each on its own connections, half of them authenticated API calls:
// below every limit, none fails, and /metrics counted each one.
func TestGatewayBurst(t *testing.T) {
	t.Parallel()
	const clients, perClient = 50, 40
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := strings.TrimPrefix(rpctest.PairOnce(t, g, code), "Authorization: ")
	base := d.GatewayURL(t)
	var wg sync.WaitGroup
	errs := make(chan string, clients*perClient)
	for i := range clients {
		wg.Go(func() {
			tr := &http.Transport{Proxy: nil}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			for j := range perClient {
				path := "/health"
				if j%2 == 1 {
					path = "/api/status"
				}
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("Authorization", auth)
				res, err := c.Do(req)
				if err != nil {
					errs <- fmt.Sprintf("client %d: %v", i, err)
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					errs <- fmt.Sprintf("client %d %s: status %d", i, path, res.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n < 10 {
			t.Error(e)
		}
		n++
	}
	if n > 0 {
		t.Fatalf("%d of %d requests failed", n, clients*perClient)
	}
	m := g.Do("GET", "/metrics", nil).Want(t, 200)
	for _, want := range []string{
		`zeroclaw_gateway_requests_total{code="200",method="GET",route="/health"} 1000`,
		`zeroclaw_gateway_requests_total{code="200",method="GET",route="/api/status"} 1000`,
	} {
		if !strings.Contains(string(m.Raw), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
