package gateway

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// securityHeaders are set on every response unless the handler set them (upstream's security_headers.rs).
var securityHeaders = [][2]string{
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "no-referrer"},
	{"Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self' ws: wss:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"},
	{"Cross-Origin-Opener-Policy", "same-origin"},
	{"Cross-Origin-Resource-Policy", "same-origin"},
	{"X-Permitted-Cross-Domain-Policies", "none"},
	{"Permissions-Policy", "geolocation=(), microphone=(), camera=()"},
}

const hsts = "max-age=63072000; includeSubDomains"

// withSecurityHeaders adds the security headers (HSTS only over TLS) before the handler writes.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range securityHeaders {
			h.Set(kv[0], kv[1])
		}
		if r.TLS != nil {
			h.Set("Strict-Transport-Security", hsts)
		}
		next.ServeHTTP(w, r)
	})
}

// withPrefix serves the routes under gateway.path_prefix (read per request): <prefix>/x reaches /x,
// <prefix>/ redirects (308) to <prefix>, and anything outside the prefix is 404.
func (s *Server) withPrefix(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := s.o.Config().Gateway.PathPrefix
		if prefix == "" {
			next.ServeHTTP(w, r)
			return
		}
		p := r.URL.Path
		switch {
		case p == prefix+"/":
			http.Redirect(w, r, prefix, http.StatusPermanentRedirect)
		case p == prefix:
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/"
			next.ServeHTTP(w, r2)
		case strings.HasPrefix(p, prefix+"/"):
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimPrefix(p, prefix)
			r2.URL.RawPath = ""
			next.ServeHTTP(w, r2)
		default:
			writeError(w, http.StatusNotFound, "not found")
		}
	})
}

// withBodyLimit caps every request body at MaxBodyBytes.
func withBodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, "request body larger than 65536 bytes")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// withTimeout answers 408 when the handler has not finished within the timeout timeout returns for the request
// (gateway.request_timeout_secs, or the long-running one). The handler writes to a buffer, so a late handler's
// output is dropped whole; its context is cancelled at the deadline.
func withTimeout(timeout func(*http.Request) time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout(r))
		defer cancel()
		tw := &timeoutWriter{h: http.Header{}}
		done := make(chan struct{})
		panicked := make(chan any, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					panicked <- p
				}
				close(done)
			}()
			next.ServeHTTP(tw, r.WithContext(ctx))
		}()
		select {
		case <-done:
			select {
			case p := <-panicked:
				panic(p)
			default:
			}
			tw.mu.Lock()
			defer tw.mu.Unlock()
			dst := w.Header()
			for k, v := range tw.h {
				dst[k] = v
			}
			if tw.code == 0 {
				tw.code = http.StatusOK
			}
			w.WriteHeader(tw.code)
			_, _ = w.Write(tw.buf.Bytes())
		case <-ctx.Done():
			tw.mu.Lock()
			tw.timedOut = true
			tw.mu.Unlock()
			if r.Context().Err() != nil {
				return // the client went away
			}
			writeError(w, http.StatusRequestTimeout, "request timed out")
		}
	})
}

// timeoutWriter buffers a handler's response for withTimeout. mu guards the fields below.
type timeoutWriter struct {
	mu       sync.Mutex
	h        http.Header
	buf      bytes.Buffer
	code     int
	timedOut bool
}

func (tw *timeoutWriter) Header() http.Header { return tw.h }

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if tw.code == 0 {
		tw.code = http.StatusOK
	}
	return tw.buf.Write(p)
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.code != 0 {
		return
	}
	tw.code = code
}

// peerIP is the IP of the TCP peer.
func peerIP(r *http.Request) net.IP {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return net.ParseIP(host)
}

// isLoopbackPeer reports whether the request comes from this host: the TCP peer is on loopback and the request
// was not forwarded (a reverse proxy on this host would otherwise make every remote client look local).
func isLoopbackPeer(r *http.Request) bool {
	ip := peerIP(r)
	return ip != nil && ip.IsLoopback() && !forwarded(r)
}

// forwarded reports whether a proxy says it passed the request on.
func forwarded(r *http.Request) bool {
	return r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Real-IP") != "" || r.Header.Get("Forwarded") != ""
}

// clientKey keys the rate limits and the pairing guard: the peer's IP, or, with
// gateway.trust_forwarded_headers, the first X-Forwarded-For address (else X-Real-IP).
func (s *Server) clientKey(r *http.Request) string {
	if s.o.Config().Gateway.TrustForwardedHeaders {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			first, _, _ := strings.Cut(xff, ",")
			if ip := net.ParseIP(strings.TrimSpace(first)); ip != nil {
				return ip.String()
			}
		}
		if ip := net.ParseIP(strings.TrimSpace(r.Header.Get("X-Real-IP"))); ip != nil {
			return ip.String()
		}
	}
	if ip := peerIP(r); ip != nil {
		return ip.String()
	}
	return r.RemoteAddr
}

// exempt reports whether the client keyed key is exempt from the auth limiter: a loopback client whose request
// was not forwarded (behind a proxy on this host every client would be exempt otherwise).
func exempt(r *http.Request, key string) bool {
	ip := net.ParseIP(key)
	return ip != nil && ip.IsLoopback() && !forwarded(r)
}
