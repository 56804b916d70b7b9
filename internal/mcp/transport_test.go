package mcp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

// testCA is a self-signed CA generated for the test, and a leaf for 127.0.0.1 it signed.
type testCA struct {
	pemPath string
	leaf    tls.Certificate
}

func newTestCA(t *testing.T, dir, name string) testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return testCA{pemPath: p, leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}}
}

func tlsServer(t *testing.T, ca testCA, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// tls_ca_cert_path against a real HTTPS MCP server whose certificate a CA generated here signed: trusted with
// the CA, refused without it, with another CA, or with a file holding no certificate (the error says which).
func TestTLSCACertPath(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t, dir, "good"), newTestCA(t, dir, "other")
	notPEM := filepath.Join(dir, "junk.pem")
	_ = os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, sse := range []bool{false, true} {
		tr := map[bool]string{false: config.MCPHTTP, true: config.MCPSSE}[sse]
		srv := tlsServer(t, ca, mcptest.Handler(sse))
		t.Run(tr+"/trusted", func(t *testing.T) {
			m := newManager(t, config.MCPServerConfig{Name: "tls", Transport: tr, URL: srv.URL, TLSCACertPath: ca.pemPath})
			st := m.ForServers(ctxT(t), []string{"tls"}, "")
			if res := call(t, st, "tls__echo", `{"text":"over tls"}`); res.Output != "echo: over tls" {
				t.Fatalf("echo = %+v; status %+v", res, m.Status())
			}
		})
		for name, c := range map[string]struct{ path, want string }{
			"no CA":       {"", "certificate"},
			"another CA":  {other.pemPath, "certificate"},
			"not PEM":     {notPEM, "no PEM certificate"},
			"missing":     {filepath.Join(dir, "absent.pem"), "no such file"},
			"a directory": {dir, "regular file"},
		} {
			t.Run(tr+"/"+name, func(t *testing.T) {
				m := newManager(t, config.MCPServerConfig{Name: "tls", Transport: tr, URL: srv.URL, TLSCACertPath: c.path, StartupTimeoutSecs: 5})
				_ = m.ForServers(ctxT(t), []string{"tls"}, "")
				waitFor(t, m, "the refusal", func() bool { return statusOf(m, "tls").State == StateBackoff })
				if st := statusOf(m, "tls"); !strings.Contains(st.LastError, c.want) {
					t.Fatalf("last error %q, want %q", st.LastError, c.want)
				}
			})
		}
	}
}

// With tls_ca_cert_path set, an SSE server that advertises a plain-http message endpoint is not followed there
// (upstream forces https for the advertised endpoint too): the http server gets no request.
func TestTLSCACertPathRefusesPlainHTTPEndpoint(t *testing.T) {
	ca := newTestCA(t, t.TempDir(), "good")
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { plainHits.Add(1) }))
	t.Cleanup(plain.Close)
	srv := tlsServer(t, ca, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message\n\n", plain.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	m := newManager(t, config.MCPServerConfig{Name: "sse", Transport: config.MCPSSE, URL: srv.URL, TLSCACertPath: ca.pemPath, StartupTimeoutSecs: 5})
	_ = m.ForServers(ctxT(t), []string{"sse"}, "")
	waitFor(t, m, "the refusal", func() bool { return statusOf(m, "sse").State == StateBackoff })
	if st := statusOf(m, "sse"); !strings.Contains(st.LastError, "must use https") || plainHits.Load() != 0 {
		t.Fatalf("last error %q, plain-http hits %d", st.LastError, plainHits.Load())
	}
}

// Secret headers go to the configured origin only: a redirect to another host (307, so the POST body follows),
// or an SSE server advertising another host's endpoint, never receives them, while the server itself does.
func TestSecretHeadersNotForwardedCrossHost(t *testing.T) {
	const secret = "Bearer sk-live-1234567890abcdef"
	var mu sync.Mutex
	var leaked []string
	var elsewhereHits int
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhereHits++
		for k, v := range r.Header {
			if strings.Contains(strings.Join(v, ","), "sk-live") || strings.EqualFold(k, "X-Api-Key") {
				leaked = append(leaked, k)
			}
		}
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(elsewhere.Close)
	for _, tc := range []struct {
		name string
		sse  bool
		h    func(w http.ResponseWriter, r *http.Request)
	}{
		{"redirect", false, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
		}},
		{"sse endpoint", true, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: %s/message\n\n", elsewhere.URL)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sawOwn atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") == secret && r.Header.Get("X-Api-Key") == "k-0987654321" {
					sawOwn.Store(true)
				}
				tc.h(w, r)
			}))
			t.Cleanup(srv.Close)
			tr := map[bool]string{false: config.MCPHTTP, true: config.MCPSSE}[tc.sse]
			m := newManager(t, config.MCPServerConfig{Name: "r", Transport: tr, URL: srv.URL, StartupTimeoutSecs: 5,
				Headers: map[string]string{"Authorization": secret, "X-Api-Key": "k-0987654321"}})
			_ = m.ForServers(ctxT(t), []string{"r"}, "")
			waitFor(t, m, "the failed start", func() bool { return statusOf(m, "r").State == StateBackoff })
			mu.Lock()
			defer mu.Unlock()
			if !sawOwn.Load() || elsewhereHits == 0 {
				t.Fatalf("the fixture did not run: own headers seen %v, other host hits %d", sawOwn.Load(), elsewhereHits)
			}
			if len(leaked) != 0 {
				t.Fatalf("secret headers sent to another host: %v", leaked)
			}
			if st := statusOf(m, "r"); strings.Contains(st.LastError, "sk-live") {
				t.Fatalf("the secret in the status: %q", st.LastError)
			}
		})
	}
}
