package rpc

import (
	"context"
	"encoding/json"

	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Caller is a client that reaches the method table without a JSON-RPC connection: a gateway HTTP request,
// already authenticated by its protocol as Principal.
type Caller struct {
	Principal *auth.Principal
	// Resolve derives the caller's principal again from a config (config writes check it under the config
	// write lock, so a revocation that landed meanwhile refuses them); nil result: refused. Nil Resolve keeps
	// Principal.
	Resolve   func(cfg *config.Config) *auth.Principal
	Label     string // e.g. "http:203.0.113.7"
	Transport auth.Transport
	// Subject is what the caller's protocol authenticated it by (a gateway device's token hash), for
	// principals that name it (SOP approvals: http:<subject>); "" when none.
	Subject string
}

// Call serves one request for c through the same table, grant check and error mapping as a connection's
// requests, so a gateway route is a thin adapter over the method. The error is a *jsonrpc.Error. Methods that
// notify their connection (session/prompt, logs/subscribe) must not be called this way: there is none.
func (s *Server) Call(ctx context.Context, c Caller, method string, params json.RawMessage) (any, error) {
	if c.Principal == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "no principal", nil)
	}
	p := &Peer{ID: router.NewConnID(), Info: PeerInfo{PID: -1, UID: -1, Label: c.Label, Transport: c.Transport, Subject: c.Subject},
		ConnectedAt: s.opts.Clock.Now(), initialized: true, principal: c.Principal, fixed: true, resolve: c.Resolve}
	defer func() {
		p.dropUploads()
		if s.opts.Sessions != nil {
			s.opts.Sessions.Disconnected(p.ID)
		}
	}()
	return s.table.Dispatch(ctx, p, &jsonrpc.Request{ID: json.RawMessage(`1`), Method: method, Params: params})
}
