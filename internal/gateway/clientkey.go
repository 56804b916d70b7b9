package gateway

import (
	"net"
	"net/http"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// forwardedPrefix starts the client key of a request that carries forwarding headers the gateway does not
// honour: its proxy's clients share one key, apart from the direct clients of the proxy's own address (the
// owner on loopback is not locked out by wrong codes a proxy passed on).
const forwardedPrefix = "forwarded-by-"

// loopbackProxies are the trusted proxies when gateway.trusted_proxies is empty: a proxy on this host.
var loopbackProxies = []string{"127.0.0.0/8", "::1"}

// clientKey keys the rate limits, the lockouts and the pairing guard: the peer's IP for a request that was not
// forwarded. With gateway.trust_forwarded_headers and a peer in gateway.trusted_proxies, the client is the
// rightmost X-Forwarded-For hop that is not a trusted proxy (each proxy appends the address it got the request
// from, so the hops left of it are the client's to write), else X-Real-IP. Forwarding headers that do not count
// key the request as forwarded-by-<peer>.
func (s *Server) clientKey(r *http.Request) string {
	peer := peerIP(r)
	if peer == nil {
		return r.RemoteAddr
	}
	if !forwarded(r) {
		return peer.String()
	}
	g := s.o.Daemon.Config().Gateway
	if g.TrustForwardedHeaders {
		trusted := trustedProxies(g)
		if inAny(trusted, peer) {
			if ip := forwardedClient(r, trusted); ip != nil {
				return ip.String()
			}
		}
	}
	return forwardedPrefix + peer.String()
}

// trustedProxies parses gateway.trusted_proxies (validated at load; a bad entry is skipped).
func trustedProxies(g config.GatewayConfig) []*net.IPNet {
	list := g.TrustedProxies
	if len(list) == 0 {
		list = loopbackProxies
	}
	nets := make([]*net.IPNet, 0, len(list))
	for _, p := range list {
		if n, err := config.ParseProxy(p); err == nil {
			nets = append(nets, n)
		}
	}
	return nets
}

func inAny(nets []*net.IPNet, ip net.IP) bool {
	for _, n := range nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// forwardedClient walks X-Forwarded-For (every header line, in order) from the right past the trusted proxies
// and returns the first hop that is not one; when every hop is trusted, the leftmost. A hop that is not an
// address stops the walk at the last trusted one before it (nil if there is none). Without X-Forwarded-For it
// is X-Real-IP, which the trusted proxy set.
func forwardedClient(r *http.Request, trusted []*net.IPNet) net.IP {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for h := range strings.SplitSeq(v, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	if len(hops) == 0 {
		return parseHop(r.Header.Get("X-Real-IP"))
	}
	var last net.IP
	for i := len(hops) - 1; i >= 0; i-- {
		ip := parseHop(hops[i])
		if ip == nil {
			return last
		}
		if !inAny(trusted, ip) {
			return ip
		}
		last = ip
	}
	return last
}

// parseHop parses one forwarded address: an IP, optionally with a port ("203.0.113.7:443", "[2001:db8::1]:80").
func parseHop(h string) net.IP {
	h = strings.TrimSpace(h)
	if ip := net.ParseIP(h); ip != nil {
		return ip
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		return net.ParseIP(host)
	}
	return nil
}
