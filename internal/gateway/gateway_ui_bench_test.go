package gateway_test

import (
	"fmt"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// BenchmarkUISessionsPage10k is the dashboard's sessions page over 10,000 stored sessions: the page itself
// (GET /ui/sessions, no data) and the one call its script makes for a page of 50 (limit 51: one more tells it
// whether there is a next page), first page, a deep page (offset 5,000), and a search, beside a floor (GET
// /health: the same client and gateway doing nothing) and the page's two scripts. First paint is the page,
// its scripts and the first page of data. A benchmark, not a timing assertion: go test -run '^$' -bench UISessionsPage10k -benchtime 50x ./internal/gateway/
func BenchmarkUISessionsPage10k(b *testing.B) {
	var banner rpctest.SyncBuf
	d := rpctest.Start(b, rpctest.WithConfig(rpctest.GatewayConfig), rpctest.WithBanner(&banner))
	g := rpctest.NewGateway(b, d.GatewayURL(b))
	code := rpctest.BannerCode.FindStringSubmatch(banner.String())[1]
	auth := "Authorization: Bearer " + g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(b, 200).Body["token"].(string)
	c := dialRC(b, d, "")
	for i := range 10000 {
		c.newSession(api.SessionNewParams{SessionID: fmt.Sprintf("bench-%05d", i), AgentAlias: "default"})
	}
	// The list is capped per request: the 10,000th session is there, the 10,001st is not.
	if n := len(g.Do("GET", "/api/sessions?limit=1&offset=9999", nil, auth).Want(b, 200).Body["sessions"].([]any)); n != 1 {
		b.Fatalf("no 10,000th session listed (%d)", n)
	}
	if n := len(g.Do("GET", "/api/sessions?limit=1&offset=10000", nil, auth).Want(b, 200).Body["sessions"].([]any)); n != 0 {
		b.Fatalf("more than 10,000 sessions listed (%d)", n)
	}
	for _, bc := range []struct{ name, path string }{
		{"floor_health", "/health"}, // the floor: one request through the same client and gateway, no work
		{"page_html", "/ui/sessions"},
		{"app_js", "/ui/assets/app.js"},
		{"sessions_js", "/ui/assets/sessions.js"},
		{"first_page", "/api/sessions?limit=51&offset=0"},
		{"page_100", "/api/sessions?limit=51&offset=4950"},
		{"search", "/api/sessions?limit=51&query=nothing"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				g.Do("GET", bc.path, nil, auth).Want(b, 200)
			}
		})
	}
}
