package api

// Agent methods (upstream's agents/*).
const (
	MethodAgentsList   = "agents/list"
	MethodAgentsStatus = "agents/status"
)

// AgentEntry is one agent of agents/list. Channels lists the channel instances bound to the agent (none here:
// this daemon has no channels yet, so it is always empty).
type AgentEntry struct {
	Alias    string   `json:"alias"`
	Enabled  bool     `json:"enabled"`
	Channels []string `json:"channels"`
}

// AgentsListResult is the result of agents/list, sorted by alias.
type AgentsListResult struct {
	Agents []AgentEntry `json:"agents"`
}

// AgentStatusEntry is one agent of agents/status: LiveSessions counts the sessions open in this daemon,
// PersistedSessions the stored sessions attributed to the agent.
type AgentStatusEntry struct {
	Alias             string   `json:"alias"`
	Enabled           bool     `json:"enabled"`
	LiveSessions      int      `json:"live_sessions"`
	PersistedSessions int      `json:"persisted_sessions"`
	Channels          []string `json:"channels"`
	// MCPServers are the MCP servers the agent is granted (mcp_bundles), with their state; absent: none.
	MCPServers []MCPServerStatus `json:"mcp_servers,omitempty"`
}

// AgentsStatusResult is the result of agents/status, sorted by alias.
type AgentsStatusResult struct {
	Agents []AgentStatusEntry `json:"agents"`
}
