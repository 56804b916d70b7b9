package rpctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client certificate, written as PEM files.
type testPKI struct {
	dir                  string
	pool                 *x509.CertPool
	clientCert           tls.Certificate
	caPath, certPath, kp string
}

func newPKI(t *testing.T) testPKI {
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
	p := testPKI{dir: dir, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.caPath = write("ca.pem", "CERTIFICATE", caDER)
	p.certPath = write("server.pem", "CERTIFICATE", srvDER)
	p.kp = write("server.key", "EC PRIVATE KEY", keyDER(srvKey))
	p.clientCert = tls.Certificate{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}
	return p
}

// tlsGW is a gateway client that trusts the test CA and, when cert is set, presents it.
func tlsGW(t *testing.T, base string, pki testPKI, cert *tls.Certificate) *gw {
	g := newGW(t, base)
	tc := &tls.Config{RootCAs: pki.pool}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	g.c.Transport.(*http.Transport).TLSClientConfig = tc
	return g
}

// TLS from configured paths, switched on by a config change: the listener is rebuilt (same daemon), serves
// HTTPS with HSTS, and a client must trust the certificate; then mTLS refuses a client without a certificate.
func TestGatewayTLSAndRebind(t *testing.T) {
	pki := newPKI(t)
	d, g, _ := startGateway(t, gwBaseConfig)
	g.do("GET", "/health", nil).want(t, 200)
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
	set("gateway.tls.cert_path", pki.certPath, "gateway.tls.key_path", pki.kp, "gateway.tls.enabled", true)
	if d.GatewayBinds() != 2 {
		t.Fatalf("TLS switched on but the gateway did not rebind (binds %d)", d.GatewayBinds())
	}
	url := d.GatewayURL(t)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("gateway URL after TLS: %s", url)
	}
	s := tlsGW(t, url, pki, nil)
	r := s.do("GET", "/health", nil).want(t, 200)
	if r.hdr.Get("Strict-Transport-Security") == "" {
		t.Fatal("no HSTS over TLS")
	}
	// A client that does not trust the CA fails the handshake.
	if _, err := newGW(t, url).c.Get(url + "/health"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusting client: %v", err)
	}
	// A setting read per request needs no rebind.
	set("gateway.pair_rate_limit_per_minute", 5)
	if d.GatewayBinds() != 2 {
		t.Fatalf("a per-request setting rebound the listener (binds %d)", d.GatewayBinds())
	}

	// mTLS: a certificate signed by the CA is required.
	set("gateway.tls.client_auth.ca_cert_path", pki.caPath, "gateway.tls.client_auth.enabled", true,
		"gateway.tls.client_auth.require_client_cert", true)
	url = d.GatewayURL(t)
	tlsGW(t, url, pki, &pki.clientCert).do("GET", "/health", nil).want(t, 200)
	if _, err := tlsGW(t, url, pki, nil).c.Get(url + "/health"); err == nil {
		t.Fatal("mTLS accepted a client without a certificate")
	}
}
