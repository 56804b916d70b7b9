package rpc

import (
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// resolvePrincipal maps a peer to its principal (auth.Resolve); a refused peer is -32010.
func resolvePrincipal(cfg *config.Config, info PeerInfo, daemonUID int) (*auth.Principal, error) {
	if info.Resolve != nil {
		if pr := info.Resolve(cfg); pr != nil {
			return pr, nil
		}
		return nil, jsonrpc.NewError(api.CodeAuthRequired, "peer not allowed: its token is no longer paired", nil)
	}
	if pr := auth.Resolve(cfg, info.Transport, info.UID, daemonUID); pr != nil {
		return pr, nil
	}
	return nil, jsonrpc.NewError(api.CodeAuthRequired, fmt.Sprintf("peer not allowed: uid %d is not a configured user", info.UID), nil)
}

func forbidden(grant string) *jsonrpc.Error {
	return jsonrpc.NewError(api.CodeForbidden, "Forbidden: missing grant "+grant, map[string]any{"grant": grant})
}
