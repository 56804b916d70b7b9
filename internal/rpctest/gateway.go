package rpctest

// The gateway's clients, for the tests of internal/gateway and the rpctest tests that reach a daemon over
// HTTP or a WebSocket: an HTTP client, the /ws/chat and /acp WebSocket client, the native protocol over
// [wss], a throwaway PKI, and the configs and pairing steps they start from.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Gateway is a real HTTP client of a test daemon's gateway.
type Gateway struct {
	t      testing.TB
	Base   string
	Client *http.Client
}

// NewGateway is a client of the gateway at base ("http://host:port"); redirects are returned, not followed.
func NewGateway(t testing.TB, base string) *Gateway {
	// No proxy from the environment: requests must reach the daemon itself.
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &Gateway{t: t, Base: base, Client: &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Response is an answered request: its status, headers and body (decoded when JSON).
type Response struct {
	Code   int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Do sends method path with body (nil, a string, or a value sent as JSON) and headers as "K: V" pairs ("Host: h"
// sets the Host). A WebSocket upgrade (101) or an event stream (text/event-stream) is closed at once.
func (g *Gateway) Do(method, path string, body any, headers ...string) Response {
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
	req, err := http.NewRequest(method, g.Base+path, rd)
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
	res, err := g.Client.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusSwitchingProtocols { // an upgraded WebSocket: its stream never ends
		return Response{Code: res.StatusCode, Header: res.Header}
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") { // nor does an event stream
		return Response{Code: res.StatusCode, Header: res.Header}
	}
	raw, _ := io.ReadAll(res.Body)
	out := Response{Code: res.StatusCode, Header: res.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

// Want fails unless r has status code.
func (r Response) Want(t testing.TB, code int) Response {
	t.Helper()
	if r.Code != code {
		t.Fatalf("status %d, want %d; body %s", r.Code, code, r.Raw)
	}
	return r
}

// SyncBuf is a goroutine-safe buffer for the daemon's banner.
type SyncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *SyncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// BannerCode finds the pairing code in what the daemon printed at start (WithBanner).
var BannerCode = regexp.MustCompile(`pairing code: (\d{6})`)

// StartGateway starts a daemon with cfg and returns it, a gateway client and the pairing code it printed.
func StartGateway(t testing.TB, cfg string, opts ...Option) (*Daemon, *Gateway, string) {
	t.Helper()
	var banner SyncBuf
	opts = append([]Option{WithBanner(&banner)}, opts...)
	if cfg != "" {
		opts = append(opts, WithConfig(cfg))
	}
	d := Start(t, opts...)
	m := BannerCode.FindStringSubmatch(banner.String())
	code := ""
	if m != nil {
		code = m[1]
	}
	return d, NewGateway(t, d.GatewayURL(t)), code
}

// GatewayConfig is a minimal config whose default agent answers with the echo provider.
const GatewayConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
`

// PairOnce pairs through POST /pair and returns the bearer header.
func PairOnce(t testing.TB, g *Gateway, code string) string {
	t.Helper()
	tok := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200).Body["token"].(string)
	return "Authorization: Bearer " + tok
}

// GatewayProfilesConfig defines two restricted device profiles: viewer reads the status, chatter runs turns.
const GatewayProfilesConfig = GatewayConfig + `
[permission_profiles.viewer]
grants = ["status:read"]

[permission_profiles.chatter]
grants = ["sessions:execute", "sessions:create", "sessions:read"]
`

// PairWithProfile makes a code carrying profile over the socket (as the owner) and pairs a device with it.
func PairWithProfile(t testing.TB, d *Daemon, g *Gateway, profile string) string {
	t.Helper()
	c := d.Dial(t)
	c.Initialize()
	c.Request("pair/code", map[string]any{"profile": profile}, "pc")
	pc := c.Result("pc")
	code, _ := pc["pairing_code"].(string)
	if len(code) != 6 || pc["profile"] != profile {
		t.Fatalf("pair/code {profile: %s} = %v", profile, pc)
	}
	return PairOnce(t, g, code)
}

// WS is a real WebSocket client of the daemon's gateway speaking /ws/chat frames.
type WS struct {
	t    testing.TB
	Conn *websocket.Conn
}

// DialWS opens path (with its query) on the gateway with the given headers; it fails the test unless the
// upgrade succeeds.
func DialWS(t testing.TB, base, path string, opts *websocket.DialOptions) *WS {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+path, opts)
	if err != nil {
		code := 0
		if res != nil {
			code = res.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", path, err, code)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return &WS{t: t, Conn: c}
}

// BearerHeader turns an "Authorization: Bearer <token>" pair into a header for a WebSocket dial.
func BearerHeader(auth string) http.Header {
	k, v, _ := strings.Cut(auth, ": ")
	return http.Header{k: {v}}
}

// Send writes v as one JSON text message.
func (w *WS) Send(v any) {
	w.t.Helper()
	b, _ := json.Marshal(v)
	w.SendRaw(string(b))
}

// SendRaw writes s as one text message.
func (w *WS) SendRaw(s string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 10*time.Second)
	defer cancel()
	if err := w.Conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// Next reads one frame.
func (w *WS) Next() map[string]any {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 20*time.Second)
	defer cancel()
	_, data, err := w.Conn.Read(ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		w.t.Fatalf("frame is not a JSON object: %s", data)
	}
	return m
}

// Until reads frames Until one of type typ, returning the types seen before it and that frame.
func (w *WS) Until(typ string) ([]string, map[string]any) {
	w.t.Helper()
	var seen []string
	for {
		f := w.Next()
		if f["type"] == typ {
			return seen, f
		}
		seen = append(seen, f["type"].(string))
	}
}

// WantError reads the next frame and checks it is an error with code.
func (w *WS) WantError(code string) {
	w.t.Helper()
	if f := w.Next(); f["type"] != "error" || f["code"] != code {
		w.t.Fatalf("got %v, want an error %s", f, code)
	}
}

// WSSConfig enables [wss] on 127.0.0.1 with pki's server certificate (the harness binds a free port).
func WSSConfig(pki PKI) string {
	return GatewayConfig + fmt.Sprintf("\n[wss]\nenabled = true\nbind = \"127.0.0.1\"\nport = 9781\ncert_path = %q\nkey_path = %q\n",
		pki.CertPath, pki.KeyPath)
}

// RPCWS is a native JSON-RPC client over one WebSocket: one message per frame.
type RPCWS struct {
	t    testing.TB
	Conn *websocket.Conn
	id   int
}

// DialWSS opens the [wss] listener at addr trusting pki's CA, with hdr at the upgrade; it returns the client, the
// upgrade's status and its error.
func DialWSS(t testing.TB, addr string, pki PKI, hdr http.Header) (*RPCWS, int, error) {
	t.Helper()
	tr := &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS12}}
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
	return &RPCWS{t: t, Conn: c}, 101, nil
}

// Call sends a request and reads frames until its response, returning it and the notifications before it.
func (r *RPCWS) Call(method string, params any) (resp map[string]any, notes []map[string]any) {
	r.t.Helper()
	r.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(r.t.Context(), 20*time.Second)
	defer cancel()
	if err := r.Conn.Write(ctx, websocket.MessageText, b); err != nil {
		r.t.Fatalf("write %s: %v", method, err)
	}
	for {
		typ, data, err := r.Conn.Read(ctx)
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

// PKI is a CA with a server certificate for 127.0.0.1 and a client certificate, written as PEM files.
type PKI struct {
	Dir                       string
	Pool                      *x509.CertPool
	ClientCert                tls.Certificate
	CAPath, CertPath, KeyPath string
}

// NewPKI makes a PKI in a temporary directory.
func NewPKI(t *testing.T) PKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zc test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	srvDER, srvKey := issue(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	cliDER, cliKey := issue(3, "client", x509.ExtKeyUsageClientAuth, nil)
	p := PKI{Dir: dir, Pool: x509.NewCertPool()}
	p.Pool.AddCert(ca)
	p.CAPath = write("ca.pem", "CERTIFICATE", caDER)
	p.CertPath = write("server.pem", "CERTIFICATE", srvDER)
	p.KeyPath = write("server.key", "EC PRIVATE KEY", keyDER(srvKey))
	p.ClientCert = tls.Certificate{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}
	return p
}
