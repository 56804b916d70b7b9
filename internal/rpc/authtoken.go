package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
)

// principalOf resolves p's principal from cfg: from the auth_token its initialize presented, else from its
// transport.
func (s *Server) principalOf(cfg *config.Config, p *Peer) (*auth.Principal, error) {
	p.mu.Lock()
	token := p.token
	p.mu.Unlock()
	return principalFrom(cfg, p.Info, s.opts.Info.UID, token)
}

// principalFrom is resolvePrincipal, unless token (an auth_token's resolver) is set: then the token alone
// decides, and a token no longer paired is refused -32010.
func principalFrom(cfg *config.Config, info PeerInfo, daemonUID int, token func(*config.Config) *auth.Principal) (*auth.Principal, error) {
	if token == nil {
		return resolvePrincipal(cfg, info, daemonUID)
	}
	if pr := token(cfg); pr != nil {
		return pr, nil
	}
	return nil, jsonrpc.NewError(api.CodeAuthRequired, "peer not allowed: its auth_token is no longer paired", nil)
}

// tokenResolver checks an initialize's auth_token: only a paired gateway token is accepted (upstream's native
// provider, the default when no other is named), and the connection acts as that token's device for as long as
// the token stays paired. An unpaired token is refused -32010: a credential that fails is final, it never
// falls back to the shared operator.
func (s *Server) tokenResolver(ctx context.Context, token string) (func(*config.Config) *auth.Principal, error) {
	m := s.opts.Pairing
	if m == nil {
		return nil, jsonrpc.NewError(api.CodeAuthRequired, "Authentication failed: this daemon verifies no auth_token", nil)
	}
	hash, ok := m.Authenticate(token)
	if !ok {
		return nil, jsonrpc.NewError(api.CodeAuthRequired, "Authentication failed: auth_token is not a paired token", nil)
	}
	id := hash[:16]
	if did, ok := m.DeviceID(ctx, hash); ok {
		id = did
	}
	return func(c *config.Config) *auth.Principal {
		if !m.Configured(c, hash) {
			return nil
		}
		return auth.Device(c, id, pairing.Profile(c, hash))
	}, nil
}
