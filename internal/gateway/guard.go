package gateway

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// The browser rules (README "Security model"): a web page must not drive the gateway. A page on another site
// can make a browser send requests here (a form POST, a fetch, a WebSocket), and a DNS-rebinding page can even
// make them look same-origin by pointing its own name at this address; what it cannot do is choose the Host
// and Origin the browser sends. So every request is checked, before any route, in this order:
//
//  1. Host: a loopback name (localhost, 127.0.0.0/8, [::1]), the bound host (any IP literal when bound to
//     every interface: an address cannot be rebound), or a gateway.allowed_hosts entry. Else 403.
//  2. Origin, on every state-changing request (a method other than GET, HEAD, OPTIONS) and every WebSocket
//     upgrade: absent (curl, native clients), or the gateway's own origin (scheme://Host), or a
//     gateway.allowed_origins entry. Else 403 ("null" is no origin we know).
//  3. Content type, on every state-changing request: not one a page may send without a CORS preflight
//     (text/plain, application/x-www-form-urlencoded, multipart/form-data). Else 415. Every route's body is
//     JSON.
//
// Refusals use the gateway's error shape, {"error": "..."}, and name the rule.

// simpleTypes are the content types a cross-site form or fetch may send without a preflight.
var simpleTypes = []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}

// withGuard applies the browser rules around next. checkHost is false on the [wss] listener, whose clients
// reach it under whatever name its certificate carries (a browser refuses a name the certificate does not).
func (s *Server) withGuard(checkHost bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.guard(checkHost, r); err != nil {
			s.handleError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guard is the browser rules' verdict on r: nil, or the 403 or 415 that refuses it.
func (s *Server) guard(checkHost bool, r *http.Request) error {
	g := s.o.Daemon.Config().Gateway
	if checkHost && !hostAllowed(g, r.Host) {
		return fail(http.StatusForbidden, "Forbidden: Host "+quote(r.Host)+
			" is not a name this gateway answers (loopback names, the bound address, gateway.allowed_hosts)")
	}
	changes := r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
	if origin, ok := r.Header["Origin"]; ok && (changes || isUpgrade(r)) && !originAllowed(g, r, origin[0]) {
		return fail(http.StatusForbidden, "Forbidden: Origin "+quote(origin[0])+
			" is not this gateway's own origin nor in gateway.allowed_origins (cross-origin requests may not change state or open WebSockets)")
	}
	if changes && simpleContentType(r) {
		return fail(http.StatusUnsupportedMediaType, "Unsupported Media Type: "+quote(r.Header.Get("Content-Type"))+
			" is a type web pages send cross-site; send the body as Content-Type: application/json")
	}
	return nil
}

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return "\"" + strings.ReplaceAll(s, "\"", "\\\"") + "\""
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket")
}

// simpleContentType reports whether r's body is declared as one of simpleTypes.
func simpleContentType(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false
	}
	media, _, err := mime.ParseMediaType(ct)
	if err != nil {
		media = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	}
	return slices.Contains(simpleTypes, media)
}

// splitHost returns hostport's host, lowercased, without brackets or a trailing dot.
func splitHost(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

// hostAllowed reports whether the Host header hostport names this gateway (rule 1).
func hostAllowed(g config.GatewayConfig, hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 without Host: no browser sends that
	}
	host := splitHost(hostport)
	if host == "localhost" {
		return true
	}
	bound := splitHost(g.Host)
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		if bip := net.ParseIP(bound); bip != nil && (bip.IsUnspecified() || bip.Equal(ip)) {
			return true
		}
	} else if host == bound {
		return true
	}
	for _, h := range g.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, _, err := net.SplitHostPort(h); err == nil {
			if strings.EqualFold(hostport, h) {
				return true
			}
		} else if splitHost(h) == host {
			return true
		}
	}
	return false
}

// originAllowed reports whether origin may change state or open a WebSocket here (rule 2): the request's own
// origin (the same host and port as its Host, which rule 1 let through; one listener serves a port, so the
// scheme adds nothing), or one of gateway.allowed_origins.
func originAllowed(g config.GatewayConfig, r *http.Request, origin string) bool {
	o := normalOrigin(origin)
	if o == "" {
		return false
	}
	for _, a := range g.AllowedOrigins {
		if normalOrigin(a) == o {
			return true
		}
	}
	u, _ := url.Parse(o)
	self := strings.ToLower(r.Host)
	if _, _, err := net.SplitHostPort(self); err != nil {
		if r.TLS != nil {
			self += ":443"
		} else {
			self += ":80"
		}
	}
	return u.Host == self
}

// normalOrigin is origin as scheme://host:port, lowercased with the default port made explicit; "" when it is
// not an http(s) origin.
func normalOrigin(origin string) string {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
		return ""
	}
	host := strings.ToLower(u.Host)
	if _, _, err := net.SplitHostPort(host); err != nil {
		if u.Scheme == "https" {
			host += ":443"
		} else {
			host += ":80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + host
}

// originPatterns are the hosts of gateway.allowed_origins, for the WebSocket library's own origin check.
func originPatterns(g config.GatewayConfig) []string {
	var out []string
	for _, a := range g.AllowedOrigins {
		if u, err := url.Parse(a); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}
