package dashboard

import (
	"encoding/json"
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// VersionCheck is GET /api/version/check in upstream's soft-failure form: we check for no releases, so
// latest_version is null, is_newer false, and error says why.
func VersionCheck() map[string]any {
	return map[string]any{
		"current_version": api.ServerVersion,
		"latest_version":  nil,
		"is_newer":        false,
		"error":           "this daemon does not check for releases",
	}
}

// AgentOptions is GET /api/config/agent-options: the alias lists the agent form offers (upstream's
// build_agent_options), from config/resolve-alias-source's namespaces.
func AgentOptions(cfg *config.Config) map[string]any {
	list := func(source string) []string {
		v, err := config.ResolveAliasSource(cfg, source)
		if err != nil || v == nil {
			return []string{}
		}
		return v
	}
	return map[string]any{
		"channels": list("channels"), "channel_types": []string{}, "model_providers": list("model_providers"),
		"risk_profiles": list("risk_profiles"), "runtime_profiles": list("runtime_profiles"),
		"skill_bundles": list("skill_bundles"), "knowledge_bundles": list("knowledge_bundles"),
		"mcp_bundles": list("mcp_bundles"), "agents": list("agents"),
	}
}

// Integrations is upstream's {integrations}: the model provider families of config/catalog (category
// AiModel), Active where [providers.models.<family>] configures one.
func Integrations(cat api.CatalogResult, cfg *config.Config) map[string]any {
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
	return map[string]any{"integrations": out}
}

// AgentSkills is upstream's {agent, skills, dropped} for agent alias (configured as a) from skills/list's
// result: the skills the agent follows, its workspace's skills/ first, then its skill_bundles in order; a
// name already taken is shadowed.
func AgentSkills(alias string, a config.AgentConfig, list api.SkillsListResult) map[string]any {
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
	return map[string]any{"agent": alias, "skills": skills, "dropped": []any{}}
}

// Persisted adds upstream's session_persistence to a session/messages result: our sessions are always kept
// (sessions.db or JSONL files), so the dashboard reads the history rather than its own copy.
func Persisted(res any) any {
	raw, err := json.Marshal(res)
	out := map[string]any{}
	if err != nil || json.Unmarshal(raw, &out) != nil {
		return res
	}
	out["session_persistence"] = true
	return out
}
