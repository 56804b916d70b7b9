package gateway_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// wrongCode is a 6-digit code other than every one in avoid.
func wrongCode(i int, avoid ...string) string {
	for {
		c := fmt.Sprintf("%06d", i%1_000_000)
		ok := true
		for _, a := range avoid {
			ok = ok && c != a
		}
		if ok {
			return c
		}
		i++
	}
}

// Issue 20 item 11: wrong codes a proxy on loopback passes on (X-Forwarded-For, not trusted) lock out the
// proxy's clients, not the owner pairing directly on 127.0.0.1.
func TestGatewayForwardedLockoutSparesLoopback(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	xff := "X-Forwarded-For: 203.0.113.7"
	for i := range pairing.MaxFailedAttempts {
		g.Do("POST", "/pair", nil, "X-Pairing-Code: "+wrongCode(i, code), xff).Want(t, 403)
	}
	g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code, xff).Want(t, 429)
	r := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200)
	if !tokenShape.MatchString(fmt.Sprint(r.Body["token"])) {
		t.Fatalf("direct pairing: %s", r.Raw)
	}
}

// Issue 20 item 7: with trust_forwarded_headers the client is the rightmost X-Forwarded-For hop that is not a
// trusted proxy, so a client that writes its own leftmost hops is still one client and is locked out; a peer
// that is not a trusted proxy has its forwarding headers ignored.
func TestGatewayForwardedRightmostUntrustedHop(t *testing.T) {
	t.Parallel()
	t.Run("rightmost", func(t *testing.T) {
		_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\ntrust_forwarded_headers = true\n")
		// The client writes any first hop; its proxy (the loopback peer, trusted by default) appends the
		// address it saw; a second trusted proxy hop on the right is skipped too.
		hop := func(i int) string {
			return fmt.Sprintf("X-Forwarded-For: 10.9.%d.%d, 203.0.113.7, 127.0.0.1", i/250, i%250)
		}
		for i := range pairing.MaxFailedAttempts {
			g.Do("POST", "/pair", nil, "X-Pairing-Code: "+wrongCode(i, code), hop(i)).Want(t, 403)
		}
		g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code, hop(99)).Want(t, 429)
		// Another client behind the same proxy is not locked out, and its device records its address.
		tok := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code, "X-Forwarded-For: 198.51.100.4").Want(t, 200).Body["token"].(string)
		devs := g.Do("GET", "/api/devices", nil, "Authorization: Bearer "+tok, "X-Forwarded-For: 198.51.100.4").Want(t, 200)
		if ip := devs.Body["devices"].([]any)[0].(map[string]any)["ip_address"]; ip != "198.51.100.4" {
			t.Fatalf("device address %v, want the forwarded client's", ip)
		}
	})
	t.Run("untrusted peer", func(t *testing.T) {
		_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\ntrust_forwarded_headers = true\ntrusted_proxies = [\"192.0.2.1\"]\n")
		// The loopback peer is not a trusted proxy: every X-Forwarded-For is its own word, one key for all.
		for i := range pairing.MaxFailedAttempts {
			g.Do("POST", "/pair", nil, "X-Pairing-Code: "+wrongCode(i, code), fmt.Sprintf("X-Forwarded-For: 198.51.100.%d", i)).Want(t, 403)
		}
		g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code, "X-Forwarded-For: 198.51.100.200").Want(t, 429)
		g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200)
	})
}

// Issue 20 item 7: a spray of wrong codes from ever new client keys (each under the per-client lockout) spends
// the global budget; then pairing pauses, the pending code is replaced, and the new one is printed on the
// daemon's terminal only. After the pause the old code is void and the new one pairs.
func TestGatewayPairingFailureBudget(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Unix(1_800_000_000, 0))
	var banner rpctest.SyncBuf
	d := rpctest.Start(t, rpctest.WithBanner(&banner), rpctest.WithClock(clk), rpctest.WithConfig(rpctest.GatewayConfig+
		"\n[gateway]\ntrust_forwarded_headers = true\npairing_failure_budget = 20\npairing_failure_window_secs = 300\n"))
	g := rpctest.NewGateway(t, d.GatewayURL(t))
	codes := rpctest.BannerCode.FindAllStringSubmatch(banner.String(), -1)
	if len(codes) != 1 {
		t.Fatalf("banner %q", banner.String())
	}
	old := codes[0][1]
	from := func(i int) string { return fmt.Sprintf("X-Forwarded-For: 198.51.%d.%d", i/250, i%250) }
	got := map[int]int{}
	for i := range 300 {
		r := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+wrongCode(i, old), from(i))
		got[r.Code]++
	}
	if got[403] != 20 || got[429] != 280 {
		t.Fatalf("spray answers %v, want 20 × 403 then 280 × 429", got)
	}
	codes = rpctest.BannerCode.FindAllStringSubmatch(banner.String(), -1)
	if len(codes) != 2 || codes[1][1] == old || !strings.Contains(banner.String(), "after 20 wrong pairing codes") {
		t.Fatalf("no replacement code on the terminal: %q", banner.String())
	}
	fresh := codes[1][1]
	// Paused: even the new code waits.
	r := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+fresh, from(1000)).Want(t, 429)
	if r.Body["retry_after"] != float64(300) {
		t.Fatalf("pause body %s", r.Raw)
	}
	for _, path := range []string{"/pair/code", "/health"} { // no route tells the new code
		if r := g.Do("GET", path, nil, from(1001)); strings.Contains(string(r.Raw), fresh) {
			t.Fatalf("%s tells the new code: %s", path, r.Raw)
		}
	}
	clk.Advance(301 * time.Second)
	g.Do("POST", "/pair", nil, "X-Pairing-Code: "+old, from(1002)).Want(t, 403)
	g.Do("POST", "/pair", nil, "X-Pairing-Code: "+fresh, from(1003)).Want(t, 200)
}

// gateway.metrics_require_token: /metrics answers 401 without a paired token and 200 with one (it is open by
// default, as upstream's; TestGatewayMetrics).
func TestGatewayMetricsRequireToken(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nmetrics_require_token = true\n")
	g.Do("GET", "/metrics", nil).Want(t, 401)
	g.Do("GET", "/metrics", nil, "Authorization: Bearer zc_"+strings.Repeat("0", 64)).Want(t, 401)
	tok := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200).Body["token"].(string)
	r := g.Do("GET", "/metrics", nil, "Authorization: Bearer "+tok).Want(t, 200)
	if !strings.Contains(string(r.Raw), "zeroclaw_gateway_requests_total") {
		t.Fatalf("metrics body %s", r.Raw)
	}
}
