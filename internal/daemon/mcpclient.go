package daemon

import (
	"context"
	"log/slog"
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// openMCP builds the daemon's MCP client: the configured servers (eager ones start now), reconciled at every
// config change. Close stops them and reaps their children; it runs after the sessions are shut down.
func openMCP(cfg *config.Manager, log *slog.Logger) *mcp.Manager {
	m := mcp.New(mcp.Options{Logger: log.With("component", "mcp"), Environ: os.Environ(), Shim: mcp.SelfShim(), Version: api.ServerVersion})
	m.Reconcile(cfg.Current().MCP)
	cfg.OnChange(func(c *config.Config) { m.ReconcileAsync(c.MCP) })
	return m
}

// mcpTools is session.Options.MCP over m.
func mcpTools(m *mcp.Manager) func(ctx context.Context, cfg *config.Config, agent, conv string) session.MCPTools {
	return func(ctx context.Context, cfg *config.Config, agent, conv string) session.MCPTools {
		if set := m.ForAgent(ctx, cfg, agent, conv); set != nil {
			return set
		}
		return nil
	}
}

// editorMCP is session.Options.EditorMCP: the servers an editor names in ACP session/new run in a manager of
// their own, under the same lifecycle, closed with the session.
func editorMCP(log *slog.Logger) func(servers []config.MCPServerConfig) session.EditorMCP {
	return func(servers []config.MCPServerConfig) session.EditorMCP {
		m := mcp.New(mcp.Options{Logger: log.With("component", "mcp", "scope", "acp-editor"), Environ: os.Environ(), Shim: mcp.SelfShim(), Version: api.ServerVersion})
		m.Reconcile(config.MCPConfig{Enabled: true, Servers: servers})
		names := make([]string, len(servers))
		for i, s := range servers {
			names[i] = s.Name
		}
		return editorSet{m: m, names: names}
	}
}

type editorSet struct {
	m     *mcp.Manager
	names []string
}

func (e editorSet) Tools(ctx context.Context, conv string) session.MCPTools {
	if set := e.m.ForServers(ctx, e.names, conv); set != nil {
		return set
	}
	return nil
}

func (e editorSet) Close() { e.m.Close() }
