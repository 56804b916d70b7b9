package rpc

import (
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// serverVersion is the server_version initialize and status advertise: rpc.server_version when set (for an
// older zerocode, which requires its own release), else api.ServerVersion.
func serverVersion(cfg *config.Config) string {
	if cfg != nil && cfg.RPC.ServerVersion != "" {
		return cfg.RPC.ServerVersion
	}
	return api.ServerVersion
}

// handshakeOnlyWindow is how soon after its initialize a connection that made no other call must close to be
// counted: zerocode 0.8.2–0.8.4 drop the connection as soon as they read a server_version that is not theirs.
const handshakeOnlyWindow = 5 * time.Second

// handshakeOnly counts connections that closed right after a successful initialize without any other call:
// the only trace we see of a client that refused our server_version.
type handshakeOnly struct {
	mu    sync.Mutex // guards the fields below
	count int
	last  time.Time
}

// noteClosed counts p if it ended within handshakeOnlyWindow of its initialize, having made no other call.
// The first such connection is logged at warn, with the setting to change.
func (s *Server) noteClosed(p *Peer) {
	p.mu.Lock()
	init, at := p.initialized, p.initAt
	p.mu.Unlock()
	now := s.opts.Clock.Now()
	if !init || p.calls.Load() > 0 || now.Sub(at) > handshakeOnlyWindow {
		return
	}
	s.handshakes.mu.Lock()
	s.handshakes.count++
	s.handshakes.last = now
	first := s.handshakes.count == 1
	s.handshakes.mu.Unlock()
	if first {
		s.log.Warn("a client closed right after initialize without another call; an older zerocode does this when server_version is not its own release: set rpc.server_version to its version",
			"conn", p.Info.Label, "server_version", serverVersion(s.config()))
	}
}

// HandshakeOnly reports the connections counted by noteClosed since the daemon started (nil when none), with
// the server_version initialize advertises now.
func (s *Server) HandshakeOnly() *api.HandshakeOnly {
	s.handshakes.mu.Lock()
	defer s.handshakes.mu.Unlock()
	if s.handshakes.count == 0 {
		return nil
	}
	return &api.HandshakeOnly{Count: s.handshakes.count, LastAt: s.handshakes.last.UTC().Format(time.RFC3339),
		ServerVersion: serverVersion(s.config())}
}
