package rpc

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// PeerInfo is what the transport knows about a connected client before it speaks.
type PeerInfo struct {
	PID       int
	UID       int    // -1 when unknown (Windows pipes)
	Label     string // "unix:pid=<pid>,uid=<uid>", "pipe:local" or "wss:<addr>"
	Transport auth.Transport
	// Resolve, when set, derives the principal from the config in force instead of the uid: a remote peer
	// authenticated by its transport (a paired token over WSS). Nil from it refuses the peer (-32010).
	Resolve func(*config.Config) *auth.Principal
	// Subject is what the transport authenticated the peer by, when it names it (Caller.Subject); "" otherwise.
	Subject string
	// DaemonChild: the local peer's process descends from the daemon's (an agent's shell tool running the
	// CLI); its SOP gate answers count as the agent's (SopDecider). Linux only; false elsewhere.
	DaemonChild bool
}

// Peer is the state of one connection: its transport identity, and what initialize bound to it.
type Peer struct {
	ID          uint64 // router.NewConnID: unique across protocols; sessions remember which connection started a turn
	Info        PeerInfo
	ConnectedAt time.Time
	conn        *jsonrpc.Conn
	calls       atomic.Int64 // requests and notifications after initialize (see noteClosed)
	// binaryChunks: initialize enabled binary upload chunks (a file/upload/chunk with data_len is followed by
	// that many raw bytes on the stream). Read by the connection's reader for every request.
	binaryChunks atomic.Bool

	mu          sync.Mutex // mu guards the fields below
	initialized bool
	initAt      time.Time // when the last successful initialize bound the connection
	tuiID       string
	elicitation bool
	env         map[string]string
	principal   *auth.Principal
	// resolvedFrom is the config snapshot principal was last resolved from by dispatch (resolved: it was).
	resolvedFrom *config.Config
	resolved     bool
	fixed        bool                                 // the principal came from the caller's protocol (Call); it is not resolved again
	resolve      func(*config.Config) *auth.Principal // Caller.Resolve of a fixed principal
	// token, set by an initialize that presented a paired auth_token, derives the principal from that token
	// (the explicit credential wins over the transport's); nil: from the transport.
	token   func(*config.Config) *auth.Principal
	uploads *upload.Staging // the uploads this connection began; made on first use
	closed  bool            // the connection ended: its uploads are dropped
}

// Conn is the connection this peer speaks on; it is used to notify and to send outbound requests.
func (p *Peer) Conn() *jsonrpc.Conn { return p.conn }

// Initialized reports whether a successful initialize is bound to the connection.
func (p *Peer) Initialized() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.initialized
}

// Principal is the identity bound by the last successful initialize (nil before).
func (p *Peer) Principal() *auth.Principal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.principal
}

// CanElicit reports whether the client declared clientCapabilities.elicitation.form.
func (p *Peer) CanElicit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.elicitation
}

// Env is the environment the client asked to forward to tool processes (local admin only).
func (p *Peer) Env() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.env
}

// TUIID is the client id bound by initialize ("" before).
func (p *Peer) TUIID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tuiID
}
