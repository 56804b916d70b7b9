package rpc

import (
	"context"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// registerAgents adds agents/list and agents/status (config:read: they describe the configured agents; the
// session counts of agents/status are daemon-wide numbers, not session contents).
func (s *Server) registerAgents(m *config.Manager, sessions *session.Manager) {
	if m == nil {
		return
	}
	s.register(api.MethodAgentsList, inline(handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.AgentsListResult, error) {
		cfg := m.Current()
		out := api.AgentsListResult{Agents: []api.AgentEntry{}}
		for _, alias := range sortedAgents(cfg) {
			out.Agents = append(out.Agents, api.AgentEntry{Alias: alias, Enabled: cfg.Agents[alias].IsEnabled(), Channels: []string{}})
		}
		return out, nil
	})))
	if sessions == nil {
		return
	}
	s.register(api.MethodAgentsStatus, handle(api.GrantConfigRead, func(ctx context.Context, _ *Peer, _ *noParams) (api.AgentsStatusResult, error) {
		stored, err := sessions.StoredByAgent(ctx)
		if err != nil {
			return api.AgentsStatusResult{}, err
		}
		live, cfg := sessions.LiveByAgent(), m.Current()
		out := api.AgentsStatusResult{Agents: []api.AgentStatusEntry{}}
		var mcp []api.MCPServerStatus
		if s.opts.MCPStatus != nil {
			mcp = s.opts.MCPStatus()
		}
		for _, alias := range sortedAgents(cfg) {
			out.Agents = append(out.Agents, api.AgentStatusEntry{Alias: alias, Enabled: cfg.Agents[alias].IsEnabled(),
				LiveSessions: live[alias], PersistedSessions: stored[alias], Channels: []string{},
				MCPServers: agentMCP(cfg, alias, mcp)})
		}
		return out, nil
	}))
}

func sortedAgents(cfg *config.Config) []string {
	out := make([]string, 0, len(cfg.Agents))
	for alias := range cfg.Agents {
		out = append(out, alias)
	}
	slices.Sort(out)
	return out
}

// agentMCP picks the statuses of the servers alias is granted, in grant order; a granted server with no
// status (mcp.enabled = false) is reported stopped.
func agentMCP(cfg *config.Config, alias string, all []api.MCPServerStatus) []api.MCPServerStatus {
	var out []api.MCPServerStatus
	for _, g := range cfg.MCPServersForAgent(alias) {
		st := api.MCPServerStatus{Name: g.Name, Transport: g.TransportOrDefault(), State: "stopped"}
		for _, a := range all {
			if strings.EqualFold(a.Name, g.Name) {
				st = a
			}
		}
		out = append(out, st)
	}
	return out
}
