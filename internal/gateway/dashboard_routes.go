package gateway

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
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
	s.handle(mux, "GET /api/version/check", s.authed(s.granted(api.GrantStatusRead, s.versionCheck)))
	s.handle(mux, "GET /api/canvas", s.authed(s.granted(api.GrantStatusRead, fixed(map[string]any{"canvases": []string{}}))))
	s.handle(mux, "GET /api/config/drift", s.authed(s.granted(api.GrantConfigRead, fixed(map[string]any{"drifted": []any{}}))))
	s.handle(mux, "GET /api/config/reload-status", s.authed(s.granted(api.GrantConfigRead, fixed(map[string]any{"pending_reload": false}))))
	s.handle(mux, "GET /api/config/agent-options", s.authed(s.granted(api.GrantConfigRead, s.agentOptions)))
	s.handle(mux, "GET /api/tools", s.authed(s.granted(api.GrantConfigRead, s.toolList)))
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

// fixed answers v. The values it serves are what we have none of: a canvas store (canvases), a poller of
// releases, CLI tool discovery and typed slash options; drift (our config writes land in the file and the
// live config together; a hand edit is read by config reload, which the dashboard's reload button calls) and
// a pending reload (no write waits for one).
func fixed(v any) callerFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ caller) error {
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// versionCheck is GET /api/version/check in upstream's soft-failure form: we check for no releases, so
// latest_version is null, is_newer false, and error says why.
func (s *Server) versionCheck(w http.ResponseWriter, _ *http.Request, _ caller) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"current_version": api.ServerVersion,
		"latest_version":  nil,
		"is_newer":        false,
		"error":           "this daemon does not check for releases",
	})
	return nil
}

// agentOptions is GET /api/config/agent-options: the alias lists the agent form offers (upstream's
// build_agent_options), from config/resolve-alias-source's namespaces.
func (s *Server) agentOptions(w http.ResponseWriter, _ *http.Request, _ caller) error {
	cfg := s.o.Daemon.Config()
	list := func(source string) []string {
		v, err := config.ResolveAliasSource(cfg, source)
		if err != nil || v == nil {
			return []string{}
		}
		return v
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"channels": list("channels"), "channel_types": []string{}, "model_providers": list("model_providers"),
		"risk_profiles": list("risk_profiles"), "runtime_profiles": list("runtime_profiles"),
		"skill_bundles": list("skill_bundles"), "knowledge_bundles": list("knowledge_bundles"),
		"mcp_bundles": list("mcp_bundles"), "agents": list("agents"),
	})
	return nil
}

// toolList is GET /api/tools: {tools} as upstream, every tool this daemon implements.
func (s *Server) toolList(w http.ResponseWriter, _ *http.Request, _ caller) error {
	tools := s.o.Daemon.Tools()
	if tools == nil {
		tools = []ToolSpec{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
	return nil
}

// integrations is GET /api/integrations: upstream's {integrations}, here the model provider families of
// config/catalog (category AiModel), Active where [providers.models.<family>] configures one.
func (s *Server) integrations(w http.ResponseWriter, r *http.Request, c caller) error {
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigCatalog, nil)
	if err != nil {
		return err
	}
	var cat api.CatalogResult
	if raw, err := json.Marshal(res); err != nil || json.Unmarshal(raw, &cat) != nil {
		return internal("gateway: config/catalog result", err)
	}
	cfg := s.o.Daemon.Config()
	out := []map[string]any{}
	for _, p := range cat.ModelProviders {
		status := "Available"
		if len(cfg.Providers.Models[p.Name]) > 0 {
			status = "Active"
		}
		desc := p.DisplayName + " models"
		if p.Local {
			desc += " (local)"
		}
		out = append(out, map[string]any{"name": p.DisplayName, "description": desc, "category": "AiModel",
			"category_label": "AI Models", "status": status})
	}
	writeJSON(w, http.StatusOK, map[string]any{"integrations": out})
	return nil
}

// agentSkills is GET /api/agents/{alias}/skills: upstream's {agent, skills, dropped}, the skills the agent
// follows: its workspace's skills/ first, then its skill_bundles in order; a name already taken is shadowed.
func (s *Server) agentSkills(w http.ResponseWriter, r *http.Request, c caller) error {
	alias := r.PathValue("alias")
	cfg := s.o.Daemon.Config()
	a, ok := cfg.Agents[alias]
	if !ok {
		return fail(http.StatusNotFound, "unknown agent: "+alias)
	}
	p, _ := json.Marshal(api.SkillsListParams{Agent: alias})
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodSkillsList, p)
	if err != nil {
		return err
	}
	var list api.SkillsListResult
	if raw, err := json.Marshal(res); err != nil || json.Unmarshal(raw, &list) != nil {
		return internal("gateway: skills/list result", err)
	}
	rank := func(e api.SkillEntry) int {
		if e.Bundle == api.WorkspaceBundle {
			return -1
		}
		if i := slices.Index(a.SkillBundles, e.Bundle); i >= 0 {
			return i
		}
		return len(a.SkillBundles) // not the agent's
	}
	entries := slices.DeleteFunc(slices.Clone(list.Skills), func(e api.SkillEntry) bool {
		return rank(e) == len(a.SkillBundles) || e.Bundle == api.WorkspaceBundle && e.Agent != alias
	})
	slices.SortStableFunc(entries, func(x, y api.SkillEntry) int { return rank(x) - rank(y) })
	skills := []map[string]any{}
	index := map[string]int{}
	for _, e := range entries {
		origin := "bundle"
		if e.Bundle == api.WorkspaceBundle {
			origin = "workspace"
		}
		if i, seen := index[e.Name]; seen {
			sh := skills[i]["shadowed"].([]map[string]string)
			skills[i]["shadowed"] = append(sh, map[string]string{"name": e.Name, "origin": origin})
			continue
		}
		var fm struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(e.Frontmatter, &fm)
		var bundle any
		if origin == "bundle" {
			bundle = e.Bundle
		}
		index[e.Name] = len(skills)
		skills = append(skills, map[string]any{"name": e.Name, "description": fm.Description, "origin": origin,
			"plugin": nil, "bundle": bundle, "directory": e.Directory, "editable": origin == "bundle",
			"shadowed": []map[string]string{}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agent": alias, "skills": skills, "dropped": []any{}})
	return nil
}

// persisted adds upstream's session_persistence to a session/messages result: our sessions are always kept
// (sessions.db or JSONL files), so the dashboard reads the history rather than its own copy.
func persisted(res any) any {
	raw, err := json.Marshal(res)
	out := map[string]any{}
	if err != nil || json.Unmarshal(raw, &out) != nil {
		return res
	}
	out["session_persistence"] = true
	return out
}
