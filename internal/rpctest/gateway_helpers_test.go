package rpctest

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// gw is a real HTTP client of a test daemon's gateway.
type gw struct {
	t    testing.TB
	base string
	c    *http.Client
}

func newGW(t testing.TB, base string) *gw {
	// No proxy from the environment: requests must reach the daemon itself.
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &gw{t: t, base: base, c: &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// resp is an answered request: its status, headers and body (decoded when JSON).
type resp struct {
	code int
	hdr  http.Header
	raw  []byte
	body map[string]any
}

// do sends method path with body (nil, a string, or a value sent as JSON) and headers as "K: V" pairs ("Host: h"
// sets the Host). A WebSocket upgrade (101) is closed at once.
func (g *gw) do(method, path string, body any, headers ...string) resp {
	g.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		if k == "Host" { // net/http sends req.Host, never a Host header
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := g.c.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusSwitchingProtocols { // an upgraded WebSocket: its stream never ends
		return resp{code: res.StatusCode, hdr: res.Header}
	}
	raw, _ := io.ReadAll(res.Body)
	out := resp{code: res.StatusCode, hdr: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// want fails unless r has status code.
func (r resp) want(t testing.TB, code int) resp {
	t.Helper()
	if r.code != code {
		t.Fatalf("status %d, want %d; body %s", r.code, code, r.raw)
	}
	return r
}

// syncBuf is a goroutine-safe buffer for the daemon's banner.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var bannerCode = regexp.MustCompile(`pairing code: (\d{6})`)

// startGateway starts a daemon with cfg and returns it, a gateway client and the pairing code it printed.
func startGateway(t *testing.T, cfg string, opts ...Option) (*Daemon, *gw, string) {
	t.Helper()
	var banner syncBuf
	opts = append([]Option{WithBanner(&banner)}, opts...)
	if cfg != "" {
		opts = append(opts, WithConfig(cfg))
	}
	d := Start(t, opts...)
	m := bannerCode.FindStringSubmatch(banner.String())
	code := ""
	if m != nil {
		code = m[1]
	}
	return d, newGW(t, d.GatewayURL(t)), code
}

// remoteIP is a non-loopback IPv4 address of this host, so a test can reach the gateway as a remote peer.
func remoteIP(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Fatal("this test needs a non-loopback IPv4 interface (CI has one) to play a remote gateway client")
	return ""
}

const gwBaseConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
`
