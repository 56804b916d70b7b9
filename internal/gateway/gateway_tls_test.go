package gateway_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// tlsGW is a gateway client that trusts the test CA and, when cert is set, presents it.
func tlsGW(t *testing.T, base string, pki rpctest.PKI, cert *tls.Certificate) *rpctest.Gateway {
	g := rpctest.NewGateway(t, base)
	tc := &tls.Config{RootCAs: pki.Pool}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	g.Client.Transport.(*http.Transport).TLSClientConfig = tc
	return g
}

// TLS from configured paths, switched on by a config change: the listener is rebuilt (same daemon), serves
// HTTPS with HSTS, and a client must trust the certificate; then mTLS refuses a client without a certificate.
func TestGatewayTLSAndRebind(t *testing.T) {
	t.Parallel()
	pki := rpctest.NewPKI(t)
	d, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig)
	g.Do("GET", "/health", nil).Want(t, 200)
	if d.GatewayBinds() != 1 {
		t.Fatalf("binds at start: %d", d.GatewayBinds())
	}
	c := dialRC(t, d, "")
	set := func(kv ...any) {
		var sets []map[string]any
		for i := 0; i < len(kv); i += 2 {
			sets = append(sets, map[string]any{"prop": kv[i], "value": kv[i+1]})
		}
		c.mustCall("config/set-many", map[string]any{"sets": sets}, nil)
	}
	set("gateway.tls.cert_path", pki.CertPath, "gateway.tls.key_path", pki.KeyPath, "gateway.tls.enabled", true)
	if d.GatewayBinds() != 2 {
		t.Fatalf("TLS switched on but the gateway did not rebind (binds %d)", d.GatewayBinds())
	}
	url := d.GatewayURL(t)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("gateway URL after TLS: %s", url)
	}
	s := tlsGW(t, url, pki, nil)
	r := s.Do("GET", "/health", nil).Want(t, 200)
	if r.Header.Get("Strict-Transport-Security") == "" {
		t.Fatal("no HSTS over TLS")
	}
	// A client that does not trust the CA fails the handshake.
	if _, err := rpctest.NewGateway(t, url).Client.Get(url + "/health"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusting client: %v", err)
	}
	// A setting read per request needs no rebind.
	set("gateway.pair_rate_limit_per_minute", 5)
	if d.GatewayBinds() != 2 {
		t.Fatalf("a per-request setting rebound the listener (binds %d)", d.GatewayBinds())
	}

	// mTLS: a certificate signed by the CA is required.
	set("gateway.tls.client_auth.ca_cert_path", pki.CAPath, "gateway.tls.client_auth.enabled", true,
		"gateway.tls.client_auth.require_client_cert", true)
	url = d.GatewayURL(t)
	tlsGW(t, url, pki, &pki.ClientCert).Do("GET", "/health", nil).Want(t, 200)
	if _, err := tlsGW(t, url, pki, nil).Client.Get(url + "/health"); err == nil {
		t.Fatal("mTLS accepted a client without a certificate")
	}
}
