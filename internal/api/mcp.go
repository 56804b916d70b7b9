package api

// MCPServerStatus is one MCP server's live state, as agents/status (per agent) and GET /api/tools show it:
// state is idle (lazy, not started), starting, ready, backoff (crashed or failed; retried) or stopped.
type MCPServerStatus struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	State     string   `json:"state"`
	Tools     int      `json:"tools"`
	ToolNames []string `json:"tool_names,omitempty"`
	Restarts  int      `json:"restarts"`
	LastError string   `json:"last_error,omitempty"`
	PID       int      `json:"pid,omitempty"`
}
