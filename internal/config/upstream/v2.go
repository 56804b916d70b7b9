package upstream

import (
	"fmt"
	"slices"
	"strings"
)

// v2ToV3 applies upstream's V2 → V3 rules.
func (m *migration) v2ToV3(in tree) (tree, error) {
	delete(in, "schema_version")
	for _, k := range []string{"swarms", "agents"} {
		if v, ok := in[k]; ok {
			if _, isTable := asTree(v); !isTable {
				return nil, fmt.Errorf("%s must be a table in a schema v2 config", k)
			}
		}
	}
	autonomy, _ := take(in, "autonomy")
	agent, _ := take(in, "agent")
	swarms, _ := take(in, "swarms")
	cron, hasCron := take(in, "cron")
	providers, _ := take(in, "providers")
	cost, hasCost := take(in, "cost")
	channels, hasChannels := take(in, "channels")
	agentsV, _ := take(in, "agents")
	agents, _ := asTree(agentsV)

	if at, ok := asTree(autonomy); ok {
		if v, ok := take(at, "non_cli_excluded_tools"); ok {
			orInsert(at, "excluded_tools", v)
		}
		risk, runtime := tree{}, tree{}
		for k, v := range at {
			if slices.Contains(runtimeAutonomyFields, k) {
				runtime[k] = v
			} else {
				risk[k] = v
			}
		}
		if len(risk) > 0 {
			mergeIntoProfileDefault(in, "risk_profiles", risk)
			m.note("[autonomy] authorization fields moved to [risk_profiles.default]")
		}
		if len(runtime) > 0 {
			mergeIntoProfileDefault(in, "runtime_profiles", runtime)
			m.note("[autonomy] budget and timeout fields moved to [runtime_profiles.default]")
		}
	}
	m.foldSecurityIntoRiskProfile(in)
	if at, ok := asTree(agent); ok {
		if v, ok := take(at, "allowed_tools"); ok {
			mergeIntoProfileDefault(in, "risk_profiles", tree{"allowed_tools": v})
			m.note("[agent] allowed_tools moved to [risk_profiles.default]")
		}
		if len(at) > 0 {
			mergeIntoProfileDefault(in, "runtime_profiles", at)
			m.note("[agent] moved to [runtime_profiles.default]")
		}
	}
	if st, ok := asTree(swarms); ok && len(st) > 0 {
		m.warn("[swarms] dropped (%d entries): schema v3 has no swarms", len(st))
	}
	if rel, ok := asTree(in["reliability"]); ok {
		_, fb := take(rel, "fallback_providers")
		_, mf := take(rel, "model_fallbacks")
		if fb || mf {
			m.note("[reliability] fallback_providers and model_fallbacks dropped (schema v3 has no provider fallback)")
		}
	}

	np, _ := asTree(providers)
	if np == nil {
		np = tree{}
	}
	if _, ok := take(np, "fallback"); ok {
		m.note("providers.fallback dropped")
	}
	modelsV, _ := take(np, "models")
	models := m.aliasProviderModels(modelsV)
	m.foldProviderGlobals(np, models)

	if hasCost {
		ct, ok := asTree(cost)
		if ok {
			if pv, ok := ct["prices"]; ok {
				if prices, isTable := asTree(pv); isTable {
					delete(ct, "prices")
					for _, id := range sortedKeys(prices) {
						m.warn("cost.prices.%s dropped: schema v3 keeps prices on each provider entry", id)
					}
				}
			}
			if len(ct) > 0 {
				in["cost"] = ct
			}
		} else {
			in["cost"] = cost
		}
	}
	if len(models) > 0 {
		np["models"] = models
	}
	m.renameRouteProviderField(np, "model_routes")
	m.renameRouteProviderField(np, "embedding_routes")
	m.renameRouteProviderField(in, "model_routes")
	m.renameRouteProviderField(in, "embedding_routes")
	m.foldTTS(in, np)
	m.foldTranscription(in, np)

	v3p := tree{}
	for _, k := range []string{"models", "tts", "transcription"} {
		if v, ok := take(np, k); ok {
			v3p[k] = v
		}
	}
	if len(v3p) > 0 {
		in["providers"] = v3p
	}
	for _, k := range []string{"model_routes", "embedding_routes"} {
		if v, ok := take(np, k); ok {
			in[k] = v
		}
	}
	if len(np) > 0 {
		m.warn("[providers] keys dropped (no place in schema v3): %s", strings.Join(sortedKeys(np), ", "))
	}

	m.foldStorage(in)
	if hasChannels {
		peerGroups, _ := asTree(in["peer_groups"])
		if peerGroups == nil {
			peerGroups = tree{}
		}
		delete(in, "peer_groups")
		in["channels"] = m.aliasWrapChannels(channels, peerGroups)
		if len(peerGroups) > 0 {
			in["peer_groups"] = peerGroups
		}
		m.note("[channels] sections wrapped under the alias \"default\"")
	}
	if hasCron {
		jobs, scheduler := m.restructureCron(cron)
		if len(jobs) > 0 {
			in["cron"] = jobs
		}
		if len(scheduler) > 0 {
			s := subtree(in, "scheduler")
			if s != nil {
				for k, v := range scheduler {
					s[k] = v
				}
			}
		}
	}
	var newAgents tree
	if len(agents) > 0 {
		newAgents = m.synthesizeAgentBrains(agents, in)
	} else {
		newAgents = m.synthesizeDefaultAgent(in)
		if len(newAgents) > 0 {
			ensureProfileEntry(in, "risk_profiles", "default")
			ensureProfileEntry(in, "runtime_profiles", "default")
		}
	}
	if len(newAgents) > 0 {
		in["agents"] = newAgents
	}
	m.liftIdentity(in)
	m.backfillHeartbeatAgent(in)
	m.rewriteDanglingPeerGroupAgents(in)
	m.renameSubkey(in, "tunnel", "provider", "tunnel_provider")
	m.renameSubkey(in, "web_search", "provider", "search_provider")
	in["schema_version"] = int64(3)
	return in, nil
}

func (m *migration) renameSubkey(root tree, parent, inner, repl string) {
	pt, ok := asTree(root[parent])
	if !ok {
		return
	}
	if _, ok := pt[repl]; ok {
		delete(pt, inner)
		return
	}
	if v, ok := take(pt, inner); ok {
		pt[repl] = v
		m.note("%s.%s renamed to %s.%s", parent, inner, parent, repl)
	}
}

var runtimeAutonomyFields = []string{"max_actions_per_hour", "max_cost_per_day_cents", "shell_timeout_secs",
	"max_delegation_depth", "delegation_timeout_secs", "agentic_timeout_secs"}

// mergeIntoProfileDefault fills <section>.default with fields, keeping values already there.
func mergeIntoProfileDefault(root tree, section string, fields tree) {
	installProfileEntry(root, section, "default", fields)
}

// installProfileEntry fills <section>.<alias> with fields, keeping values already there.
func installProfileEntry(root tree, section, alias string, fields tree) {
	s := subtree(root, section)
	if s == nil {
		return
	}
	e := subtree(s, alias)
	if e == nil {
		return
	}
	for k, v := range fields {
		orInsert(e, k, v)
	}
}

func ensureProfileEntry(root tree, section, alias string) {
	installProfileEntry(root, section, alias, nil)
}

func (m *migration) foldSecurityIntoRiskProfile(in tree) {
	sec, ok := asTree(in["security"])
	if !ok {
		return
	}
	sandbox, _ := take(sec, "sandbox")
	resources, _ := take(sec, "resources")
	if rt, ok := asTree(resources); ok && len(rt) > 0 {
		m.warn("[security.resources] dropped (%s): schema v3 has no such limits", strings.Join(sortedKeys(rt), ", "))
	}
	st, ok := asTree(sandbox)
	if !ok || len(st) == 0 {
		return
	}
	fields := tree{}
	for k, v := range st {
		switch k {
		case "enabled":
			fields["sandbox_enabled"] = v
		case "backend":
			fields["sandbox_backend"] = v
		case "firejail_args":
			fields["firejail_args"] = v
		}
	}
	mergeIntoProfileDefault(in, "risk_profiles", fields)
	m.note("[security.sandbox] folded into [risk_profiles.default]")
}
