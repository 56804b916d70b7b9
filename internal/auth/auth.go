// Package auth is the daemon's permission model (protocol.md §8): the transports a peer arrives on, the
// principal it acts as, and the one matcher that decides whether a set of grants covers a method or a property
// path. Protocol packages (rpc, and later acp and the gateway) ask it; none matches grants on its own.
package auth

// Transport is how a peer reached the daemon. It decides how the peer is identified and what it may forward.
type Transport string

// The transports protocol.md names.
const (
	TransportUnix Transport = "unix" // the local Unix domain socket; the kernel reports the peer's uid
	TransportPipe Transport = "pipe" // the local Windows named pipe, whose ACL admits only the creating user and SYSTEM
	TransportWSS  Transport = "wss"  // RPC over a TLS WebSocket: a remote peer
	// TransportHTTP is a gateway HTTP request: a remote peer (even from loopback), identified by its token.
	TransportHTTP Transport = "http"
)

// Local reports whether the transport is one of the daemon's local endpoints (not a remote peer).
func (t Transport) Local() bool { return t == TransportUnix || t == TransportPipe }
