package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// ToolSpec is one tool an agent may be given, as GET /api/tools lists it (upstream's ToolSpec: name,
// description, the JSON Schema of its arguments).
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// dashboardRoutes are the routes upstream's dashboard polls on every page, in its shapes. Reads need the
// grant of what they show (status:read for the daemon's own facts, config:read for the config, skills:read
// for skills); none changes anything.
func (s *Server) dashboardRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/version/check", s.authed(s.granted(api.GrantStatusRead, fixed(dashboard.VersionCheck()))))
	s.handle(mux, "GET /api/canvas", s.authed(s.granted(api.GrantStatusRead, fixed(map[string]any{"canvases": []string{}}))))
	s.handle(mux, "GET /api/config/reload-status", s.authed(s.granted(api.GrantConfigRead, fixed(map[string]any{"pending_reload": false}))))
	s.handle(mux, "GET /api/config/agent-options", s.authed(s.granted(api.GrantConfigRead, s.agentOptions)))
	s.handle(mux, "GET /api/tools", s.authed(s.granted(api.GrantConfigRead, s.toolList)))
	s.handle(mux, "GET /api/channels", s.authed(s.granted(api.GrantStatusRead, s.channelList)))
	s.handle(mux, "GET /api/cli-tools", s.authed(s.granted(api.GrantConfigRead, fixed(map[string]any{"cli_tools": []any{}}))))
	s.handle(mux, "GET /api/integrations", s.authed(s.integrations))
	s.handle(mux, "GET /api/skills/slash-option-kinds", s.authed(s.granted(api.GrantSkillsRead, fixed(map[string]any{"kinds": []any{}}))))
	s.handle(mux, "GET /api/agents/{alias}/skills", s.authed(s.granted(api.GrantSkillsRead, s.agentSkills)))
}

// granted runs h only for a caller holding grant (403 otherwise, as the methods refuse).
func (s *Server) granted(grant string, h callerFunc) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		if !c.principal.Allows(grant) {
			return fail(http.StatusForbidden, "Forbidden: missing grant "+grant)
		}
		return h(w, r, c)
	}
}

// callAs calls method for c and decodes its result as T (a result that does not decode is a 500, logged).
func callAs[T any](s *Server, r *http.Request, c caller, method string, params json.RawMessage) (T, error) {
	var v T
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), method, params)
	if err != nil {
		return v, err
	}
	raw, err := json.Marshal(res)
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		return v, internal("gateway: "+method+" result", err)
	}
	return v, nil
}

// fixed answers v. The values it serves are what we have none of: a canvas store (canvases), a poller of
// releases, CLI tool discovery and typed slash options, and a pending reload (no write waits for one: our
// config writes land in the file and the live config together; a hand edit shows as drift until reloaded).
func fixed(v any) callerFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ caller) error {
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// agentOptions is GET /api/config/agent-options (dashboard.AgentOptions).
func (s *Server) agentOptions(w http.ResponseWriter, _ *http.Request, _ caller) error {
	writeJSON(w, http.StatusOK, dashboard.AgentOptions(s.o.Daemon.Config()))
	return nil
}

// toolList is GET /api/tools[?agent=<alias>]: {tools} as upstream, every tool this daemon implements and,
// for an agent, its MCP servers' tools (upstream zeroclaw#8302); mcp_servers (ours) is their state.
func (s *Server) toolList(w http.ResponseWriter, r *http.Request, _ caller) error {
	tools, servers := s.o.Daemon.Tools(r.URL.Query().Get("agent"))
	if tools == nil {
		tools = []ToolSpec{}
	}
	if servers == nil {
		servers = []api.MCPServerStatus{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools, "mcp_servers": servers})
	return nil
}

// integrations is GET /api/integrations (dashboard.Integrations, from config/catalog).
func (s *Server) integrations(w http.ResponseWriter, r *http.Request, c caller) error {
	cat, err := callAs[api.CatalogResult](s, r, c, api.MethodConfigCatalog, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dashboard.Integrations(cat, s.o.Daemon.Config()))
	return nil
}

// agentSkills is GET /api/agents/{alias}/skills (dashboard.AgentSkills, from skills/list).
func (s *Server) agentSkills(w http.ResponseWriter, r *http.Request, c caller) error {
	alias := r.PathValue("alias")
	cfg := s.o.Daemon.Config()
	a, ok := cfg.Agents[alias]
	if !ok {
		return fail(http.StatusNotFound, "unknown agent: "+alias)
	}
	p, _ := json.Marshal(api.SkillsListParams{Agent: alias})
	list, err := callAs[api.SkillsListResult](s, r, c, api.MethodSkillsList, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dashboard.AgentSkills(alias, a, list))
	return nil
}
