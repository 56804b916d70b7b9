package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/mcpserver"
)

// newMCPServer is the daemon as an MCP server, served by the gateway's /mcp (`zeroclaw mcp serve` runs its own
// in the command's process, over this daemon's socket).
func newMCPServer(log *slog.Logger) *mcpserver.Server {
	return mcpserver.New(mcpserver.Options{Version: api.BuildVersion(), Logger: log.With("component", "mcp")})
}

// ServeMCP serves /mcp: the client acts as its gateway identity, through the same method table as every route.
func (g *gatewayDaemon) ServeMCP(w http.ResponseWriter, r *http.Request, id gateway.Identity, owner string) {
	principal := func() *auth.Principal { // the device's grants now: a reload that changed them applies at once
		if id.Resolve == nil {
			return id.Principal
		}
		return id.Resolve(g.d.cfg.Current())
	}
	g.d.mcp.ServeHTTP(w, r, &mcpserver.Peer{Label: id.Label, Owner: owner, Principal: principal,
		Call: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			now := id // a session outlives the request that opened it: each call acts with the grants in force
			if now.Principal = principal(); now.Principal == nil {
				return nil, jsonrpc.NewError(api.CodeAuthRequired, "peer not allowed: its token is no longer paired", nil)
			}
			return g.Call(ctx, now, method, params)
		}})
}

// closeMCP ends the MCP sessions at shutdown: their tool calls drain within ctx, then every session (and the
// stream the gateway's shutdown would otherwise wait for) ends.
func (d *daemon) closeMCP(ctx context.Context) {
	if err := d.mcp.Drain(ctx); err != nil {
		d.log.Warn("MCP tool calls cut at the drain deadline", "component", "mcp", "err", err)
	}
	d.mcp.Close()
}
