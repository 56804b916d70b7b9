package gateway

import (
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

// securityValues are securityHeaders' values as header value slices, built once: every response shares them
// (net/http only reads them; Set replaces a slice and Add appends to a full one, so neither writes into them).
var securityValues, hstsValue = func() [][]string {
	vs := make([][]string, len(securityHeaders))
	for i, kv := range securityHeaders {
		vs[i] = []string{kv[1]}
	}
	return vs
}(), []string{hsts}

// withSecurityHeaders adds the security headers (HSTS only over TLS) before the handler writes.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for i, kv := range securityHeaders {
			h[kv[0]] = securityValues[i] // the names are canonical
		}
		if r.TLS != nil {
			h["Strict-Transport-Security"] = hstsValue
		}
		next.ServeHTTP(w, r)
	})
}

// withPrefix serves the routes under gateway.path_prefix (read per request): <prefix>/x reaches /x,
// <prefix>/ redirects (308) to <prefix>, and anything outside the prefix is 404.
func (s *Server) withPrefix(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := s.o.Daemon.Config().Gateway.PathPrefix
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
			s.handleError(w, fail(http.StatusNotFound, "not found"))
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
		if r.Body != nil && r.Body != http.NoBody { // nothing to read, nothing to cap
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// withTimeout answers 408 when the handler has not started its response within the timeout timeout returns for
// the request (gateway.request_timeout_secs, or the long-running one). The handler runs on the request's own
// goroutine with a context that ends at the deadline, and writes through, unbuffered: at the deadline a handler
// that has written nothing yet is answered 408 at once (by the context's AfterFunc, even if the handler ignores
// its context), and whatever it writes after that is dropped. A response started before the deadline is let
// through. The handler's headers go to a map of its own until it writes, so the deadline never races them.
func withTimeout(timeout func(*http.Request) time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout(r))
		defer cancel()
		tw := &timeoutWriter{w: w, ctx: ctx, r: r}
		stop := context.AfterFunc(ctx, tw.expire)
		defer func() {
			stop()
			tw.finish()
		}()
		next.ServeHTTP(tw, r.WithContext(ctx))
	})
}

// timeoutWriter passes a handler's response through to w unless the deadline came first. mu guards w and the
// fields below: the deadline's 408 and the handler's writes never overlap, and nothing touches w once the
// middleware returns.
type timeoutWriter struct {
	h   http.Header     // the handler's headers until its response starts; nil until Header is called
	ctx context.Context // the handler's: it ends at the deadline
	r   *http.Request   // the request as it came: its context ends when the client leaves

	mu       sync.Mutex
	w        http.ResponseWriter
	started  bool // the handler's status line went to w
	timedOut bool // the 408 went to w (or the client left): the handler's output is dropped
	done     bool // the middleware returned: w is no longer ours
}

func (tw *timeoutWriter) Header() http.Header {
	if tw.h == nil {
		tw.h = http.Header{}
	}
	return tw.h
}

// start sends the handler's headers and status line to w. mu is held.
func (tw *timeoutWriter) start(code int) {
	tw.started = true
	if len(tw.h) > 0 {
		dst := tw.w.Header()
		for k, v := range tw.h {
			dst[k] = v
		}
	}
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.started || tw.done {
		return
	}
	if tw.ctx.Err() != nil { // past the deadline, before expire ran
		tw.timeOut()
		return
	}
	tw.start(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.done {
		return 0, http.ErrHandlerTimeout
	}
	if !tw.started {
		if tw.ctx.Err() != nil {
			tw.timeOut()
			return 0, http.ErrHandlerTimeout
		}
		tw.start(http.StatusOK)
	}
	return tw.w.Write(p)
}

// expire runs at the deadline (or when the client leaves).
func (tw *timeoutWriter) expire() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.started || tw.timedOut || tw.done {
		return
	}
	tw.timeOut()
}

// timeOut drops the handler's output and answers 408, flushed at once; a client that left gets nothing. mu is
// held and the response has not started.
func (tw *timeoutWriter) timeOut() {
	tw.timedOut = true
	if tw.r.Context().Err() != nil {
		return // the client went away
	}
	writeError(tw.w, http.StatusRequestTimeout, "request timed out")
	_ = http.NewResponseController(tw.w).Flush()
}

// finish ends the handler's response: a handler that wrote nothing gets its headers and 200 (as net/http would
// send them), or the 408 when the deadline has passed.
func (tw *timeoutWriter) finish() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.started && !tw.timedOut {
		if tw.ctx.Err() != nil {
			tw.timeOut()
		} else {
			tw.start(http.StatusOK)
		}
	}
	tw.done = true
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

// exempt reports whether the client keyed key is exempt from the auth limiter: a loopback client whose request
// was not forwarded (behind a proxy on this host every client would be exempt otherwise).
func exempt(r *http.Request, key string) bool {
	ip := net.ParseIP(key)
	return ip != nil && ip.IsLoopback() && !forwarded(r)
}
