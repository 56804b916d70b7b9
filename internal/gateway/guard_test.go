package gateway

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// The Host allow-list: loopback names and addresses with any port, the bound host, any IP literal when bound to
// every interface, gateway.allowed_hosts (with or without a port); nothing else, whatever its case or dots.
func TestHostAllowed(t *testing.T) {
	g := config.GatewayConfig{Host: "127.0.0.1", AllowedHosts: []string{"zc.example", "proxy.example:8443"}}
	wild := config.GatewayConfig{Host: "0.0.0.0"}
	named := config.GatewayConfig{Host: "box.lan"}
	cases := []struct {
		g    config.GatewayConfig
		host string
		want bool
	}{
		{g, "localhost", true}, {g, "localhost:42617", true}, {g, "LOCALHOST.:1", true},
		{g, "127.0.0.1:42617", true}, {g, "127.8.9.10", true}, {g, "[::1]:42617", true}, {g, "", true},
		{g, "zc.example", true}, {g, "ZC.example:99", true}, {g, "proxy.example:8443", true},
		{g, "proxy.example:8444", false}, {g, "proxy.example", false},
		{g, "evil.example:42617", false}, {g, "localhost.evil.example", false}, {g, "foo.localhost", false},
		{g, "192.168.1.5:42617", false}, {g, "127.0.0.1.nip.io", false},
		{wild, "192.168.1.5:42617", true}, {wild, "[fe80::1]:42617", true}, {wild, "box.lan", false},
		{named, "box.lan:42617", true}, {named, "192.168.1.5", false},
	}
	for _, c := range cases {
		if got := hostAllowed(c.g, c.host); got != c.want {
			t.Errorf("bound %q allowed %q, Host %q: %v, want %v", c.g.Host, c.g.AllowedHosts, c.host, got, c.want)
		}
	}
}

// The Origin rule: the request's own origin (host and port of its Host, default ports made explicit) or an
// allowed_origins entry; null, other hosts, other ports and non-http schemes are refused.
func TestOriginAllowed(t *testing.T) {
	g := config.GatewayConfig{AllowedOrigins: []string{"https://app.example", "http://tool.example:3000"}}
	cases := []struct {
		host, origin string
		tls          bool
		want         bool
	}{
		{"127.0.0.1:42617", "http://127.0.0.1:42617", false, true},
		{"127.0.0.1:42617", "HTTP://127.0.0.1:42617/", false, true},
		{"localhost:42617", "http://localhost:42617", false, true},
		{"localhost", "http://localhost:80", false, true},
		{"localhost", "https://localhost", true, true},
		{"127.0.0.1:42617", "http://localhost:42617", false, false},
		{"127.0.0.1:42617", "http://127.0.0.1:42618", false, false},
		{"127.0.0.1:42617", "http://evil.example", false, false},
		{"127.0.0.1:42617", "null", false, false},
		{"127.0.0.1:42617", "", false, false},
		{"127.0.0.1:42617", "file://", false, false},
		{"127.0.0.1:42617", "http://127.0.0.1:42617/page", false, false},
		{"127.0.0.1:42617", "https://app.example", false, true},
		{"127.0.0.1:42617", "https://app.example:443", false, true},
		{"127.0.0.1:42617", "http://app.example", false, false},
		{"127.0.0.1:42617", "http://tool.example:3000", false, true},
		{"127.0.0.1:42617", "http://tool.example", false, false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "http://"+c.host+"/admin/reload", nil)
		r.Host = c.host
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if got := originAllowed(g, r, c.origin); got != c.want {
			t.Errorf("Host %q, Origin %q (tls %v): %v, want %v", c.host, c.origin, c.tls, got, c.want)
		}
	}
}
