package upstream

import (
	"slices"
	"strings"
)

// synthesizeAgentBrains moves each v2 agent's inline provider settings onto a provider entry of its own and
// its runtime settings onto profiles of its own.
func (m *migration) synthesizeAgentBrains(agents, root tree) tree {
	out := tree{}
	for _, alias := range sortedKeys(agents) {
		at, ok := asTree(agents[alias])
		if !ok {
			out[alias] = agents[alias]
			continue
		}
		provider, hasProvider := take(at, "provider")
		model, hasModel := take(at, "model")
		apiKey, hasKey := take(at, "api_key")
		temp, hasTemp := take(at, "temperature")
		timeout, hasTimeout := take(at, "timeout_secs")
		if raw, ok := provider.(string); ok {
			typ, url := splitColonURL(raw)
			palias := "agent_" + alias
			entry := tree{}
			if url != "" {
				entry["uri"] = url
			}
			if hasModel {
				entry["model"] = model
			}
			if hasKey {
				entry["api_key"] = apiKey
			}
			if hasTemp {
				entry["temperature"] = temp
			}
			if hasTimeout {
				entry["timeout_secs"] = timeout
			}
			if p := subtree(root, "providers"); p != nil {
				if ms := subtree(p, "models"); ms != nil {
					if pt := subtree(ms, typ); pt != nil {
						pt[palias] = entry
					}
				}
			}
			at["model_provider"] = typ + "." + palias
			m.note("agents.%s: inline provider moved to providers.models.%s.%s", alias, typ, palias)
		} else {
			if hasTimeout {
				m.warn("agents.%s.timeout_secs dropped: the agent names no inline provider to carry it", alias)
			}
			if hasProvider {
				at["provider"] = provider
			}
		}
		maxIter, hasIter := take(at, "max_iterations")
		if !hasIter {
			maxIter, hasIter = take(at, "max_tool_iterations")
		}
		allowed, hasAllowed := take(at, "allowed_tools")
		agentic, hasAgentic := take(at, "agentic")
		depth, hasDepth := take(at, "max_depth")
		agTimeout, hasAgTimeout := take(at, "agentic_timeout_secs")
		profile := "agent_" + alias
		if hasAllowed {
			installProfileEntry(root, "risk_profiles", profile, tree{"allowed_tools": allowed})
			orInsert(at, "risk_profile", profile)
			m.note("agents.%s.allowed_tools moved to risk_profiles.%s", alias, profile)
		}
		if hasAgentic || hasDepth || hasAgTimeout || hasIter {
			fields := tree{}
			if hasAgentic {
				fields["agentic"] = agentic
			}
			if hasDepth {
				fields["max_delegation_depth"] = depth
			}
			if hasAgTimeout {
				fields["agentic_timeout_secs"] = agTimeout
			}
			if hasIter {
				fields["max_tool_iterations"] = maxIter
			}
			installProfileEntry(root, "runtime_profiles", profile, fields)
			orInsert(at, "runtime_profile", profile)
			m.note("agents.%s runtime settings moved to runtime_profiles.%s", alias, profile)
		}
		if sd, ok := take(at, "skills_directory"); ok {
			if dir, ok := sd.(string); ok && dir != "" {
				bundle := "agent_" + alias
				entry := tree{}
				trimmed := strings.TrimPrefix(strings.TrimSpace(dir), "./")
				if !strings.HasPrefix(trimmed, "/") && (trimmed == "shared" || strings.HasPrefix(trimmed, "shared/")) {
					entry["directory"] = dir
				} else {
					m.warn("agents.%s.skills_directory %q lies outside <install>/shared/: dropped; copy its skills into <install>/shared/skills/%s/", alias, dir, bundle)
				}
				installProfileEntry(root, "skill_bundles", bundle, entry)
				list, _ := at["skill_bundles"].([]any)
				if !slices.ContainsFunc(list, func(x any) bool { return x == bundle }) {
					list = append(list, bundle)
				}
				at["skill_bundles"] = list
			}
		}
		for _, kind := range []string{"risk_profile", "runtime_profile"} {
			name, _ := at[kind].(string)
			if name == "" {
				name = "default"
			}
			ensureProfileEntry(root, kind+"s", name)
			at[kind] = name
		}
		delete(at, "memory_namespace")
		out[alias] = at
	}
	return out
}

// synthesizeDefaultAgent gives a config without agents the agents.default that v1/v2 ran implicitly.
func (m *migration) synthesizeDefaultAgent(root tree) tree {
	p, _ := asTree(root["providers"])
	models, ok := asTree(p["models"])
	if !ok {
		return tree{}
	}
	ref := ""
	if typ, alias, ok := strings.Cut(m.target, "."); ok {
		if pt, ok := asTree(models[typ]); ok {
			if _, ok := pt[alias]; ok {
				ref = m.target
			}
		}
	}
	if ref == "" {
		for _, typ := range sortedKeys(models) {
			if pt, ok := asTree(models[typ]); ok && len(pt) > 0 {
				ref = typ + "." + sortedKeys(pt)[0]
				break
			}
		}
	}
	if ref == "" {
		return tree{}
	}
	m.note("agents.default created (model_provider %s), as v1/v2 ran one implicit agent", ref)
	return tree{"default": tree{"model_provider": ref, "risk_profile": "default", "runtime_profile": "default"}}
}

func (m *migration) liftIdentity(root tree) {
	id, ok := take(root, "identity")
	if !ok {
		return
	}
	agents, ok := asTree(root["agents"])
	if !ok || len(agents) == 0 {
		m.warn("[identity] dropped: there is no agent to attach it to")
		return
	}
	for _, a := range sortedKeys(agents) {
		if at, ok := asTree(agents[a]); ok {
			if _, has := at["identity"]; !has {
				at["identity"] = deepCopy(id)
			}
		}
	}
	m.note("[identity] copied into each agent")
}

func (m *migration) backfillHeartbeatAgent(root tree) {
	hb, ok := asTree(root["heartbeat"])
	if !ok {
		return
	}
	enabled, _ := hb["enabled"].(bool)
	agent, _ := hb["agent"].(string)
	if !enabled || strings.TrimSpace(agent) != "" {
		return
	}
	agents, _ := asTree(root["agents"])
	alias := ""
	if _, ok := agents["default"]; ok {
		alias = "default"
	} else if keys := sortedKeys(agents); len(keys) > 0 {
		alias = keys[0]
	}
	if alias == "" {
		return
	}
	hb["agent"] = alias
	m.note("heartbeat.agent set to %q", alias)
}

func (m *migration) rewriteDanglingPeerGroupAgents(root tree) {
	agents, ok := asTree(root["agents"])
	if !ok || len(agents) == 0 {
		return
	}
	if _, ok := agents["default"]; ok {
		return
	}
	repl := sortedKeys(agents)[0]
	groups, ok := asTree(root["peer_groups"])
	if !ok {
		return
	}
	var types []string
	for _, g := range sortedKeys(groups) {
		gt, ok := asTree(groups[g])
		if !ok {
			continue
		}
		arr, ok := gt["agents"].([]any)
		if !ok || len(arr) != 1 || arr[0] != "default" {
			continue
		}
		gt["agents"] = []any{repl}
		if c, ok := gt["channel"].(string); ok {
			types = append(types, c)
		}
	}
	if len(types) == 0 {
		return
	}
	channels, _ := asTree(root["channels"])
	var refs []any
	for _, ct := range types {
		if ctt, ok := asTree(channels[ct]); ok {
			for _, a := range sortedKeys(ctt) {
				r := ct + "." + a
				if !slices.Contains(refs, any(r)) {
					refs = append(refs, r)
				}
			}
		}
	}
	at, ok := asTree(agents[repl])
	if !ok || len(refs) == 0 {
		return
	}
	list, isList := at["channels"].([]any)
	if _, exists := at["channels"]; exists && !isList {
		return
	}
	for _, r := range refs {
		if !slices.Contains(list, r) {
			list = append(list, r)
		}
	}
	at["channels"] = list
	m.note("peer groups bound to the missing agent \"default\" now name agents.%s", repl)
}
