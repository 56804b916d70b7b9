package rpc

import (
	"context"
	"slices"

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
		for _, alias := range sortedAgents(cfg) {
			out.Agents = append(out.Agents, api.AgentStatusEntry{Alias: alias, Enabled: cfg.Agents[alias].IsEnabled(),
				LiveSessions: live[alias], PersistedSessions: stored[alias], Channels: []string{}})
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
