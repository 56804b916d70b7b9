package upstream

import (
	"fmt"
	"strings"
)

// This runtime's provider families (config.Families; a config test checks they agree).
const (
	familyEcho      = "echo"
	familyOpenAI    = "openai"
	familyOllama    = "ollama"
	familyAnthropic = "anthropic"
)

// Families returns the provider families the migration maps upstream's provider types onto.
func Families() []string { return []string{familyEcho, familyOpenAI, familyOllama, familyAnthropic} }

// openAICompatible lists upstream provider types served here by the openai family, with the base URL upstream
// uses when the entry has no uri.
var openAICompatible = map[string]string{
	"openrouter":    "https://openrouter.ai/api/v1",
	"groq":          "https://api.groq.com/openai/v1",
	"xai":           "https://api.x.ai/v1",
	"mistral":       "https://api.mistral.ai/v1",
	"deepseek":      "https://api.deepseek.com",
	"together":      "https://api.together.xyz",
	"fireworks":     "https://api.fireworks.ai/inference/v1",
	"perplexity":    "https://api.perplexity.ai",
	"cerebras":      "https://api.cerebras.ai/v1",
	"sambanova":     "https://api.sambanova.ai/v1",
	"hyperbolic":    "https://api.hyperbolic.xyz/v1",
	"deepinfra":     "https://api.deepinfra.com/v1/openai",
	"huggingface":   "https://router.huggingface.co/v1",
	"nvidia":        "https://integrate.api.nvidia.com/v1",
	"siliconflow":   "https://api.siliconflow.com/v1",
	"novita":        "https://api.novita.ai/openai",
	"cohere":        "https://api.cohere.com/compatibility",
	"ai21":          "https://api.ai21.com/studio/v1",
	"github_models": "https://models.github.ai/inference",
	"lambda_ai":     "https://api.lambda.ai/v1",
	"ovh":           "https://oai.endpoints.kepler.ai.cloud.ovh.net/v1",
	"lmstudio":      "http://localhost:1234/v1",
	"llamacpp":      "http://localhost:8080/v1",
	"vllm":          "http://localhost:8000/v1",
	"sglang":        "http://localhost:30000/v1",
	"litellm":       "http://localhost:4000/v1",
	"osaurus":       "http://localhost:1337/v1",
	// custom is upstream's "any OpenAI-compatible endpoint": it has no default, the entry must carry a uri.
	"custom": "",
}

// endpointSuffix is the request path each family appends to uri; an upstream uri that already ends with it is
// cut back to the base URL this runtime expects.
var endpointSuffix = map[string]string{
	familyOpenAI:    "/chat/completions",
	familyAnthropic: "/v1/messages",
	familyOllama:    "/api/chat",
}

// familyOf decides where the upstream entry providers.models.<typ>.<alias> goes here: its family, or why it
// cannot be used.
func familyOf(typ, alias string, entry tree) (string, string) {
	switch typ {
	case familyEcho, familyOllama:
		return typ, ""
	case familyOpenAI, familyAnthropic:
		return typ, ""
	case "openai-codex":
		return "", "it signs in with a ChatGPT account (OpenAI Codex), which this runtime does not support"
	case "claude-code":
		return "", "it runs the Claude Code CLI, which this runtime does not support"
	}
	base, ok := openAICompatible[typ]
	if !ok {
		return "", fmt.Sprintf("upstream provider type %q has no equivalent here (families: echo, openai-compatible, ollama, anthropic)", typ)
	}
	if _, hasURI := entry["uri"].(string); !hasURI && base == "" {
		return "", "it has no uri"
	}
	return familyOpenAI, ""
}

// mapFamilies moves every upstream provider entry of an upstream v3 tree onto this runtime's families:
// openai-compatible types become openai entries carrying their uri (alias "<type>" for their "default", else
// "<type>_<alias>"), and every model_provider reference follows. Entries that cannot be mapped stay where they
// are, with a warning; decoding ignores them.
func (m *migration) mapFamilies(root tree) {
	p, _ := asTree(root["providers"])
	models, ok := asTree(p["models"])
	if !ok {
		return
	}
	renames := map[string]string{}
	// Names upstream's v2 → v3 step leaves as they were (an agent's inline "anthropic-custom:<url>", the
	// "claude-code" type), and variants that are not the family's API (claude-code, codex), take their
	// canonical type first; the variants keep a type of their own, which no family decodes.
	for _, typ := range sortedKeys(models) {
		pt, ok := asTree(models[typ])
		if !ok {
			continue
		}
		for _, alias := range sortedKeys(pt) {
			entry, _ := asTree(pt[alias])
			ctyp, calias, _ := normalizeProviderType(typ, alias)
			switch {
			case typ == familyAnthropic && alias == "claude-code":
				ctyp, calias = "claude-code", "default"
			case ctyp == familyAnthropic && calias == "claude-code":
				ctyp, calias = "claude-code", alias
			case typ == familyOpenAI && alias == "codex":
				ctyp, calias = "openai-codex", "default"
			case typ == familyOpenAI && entry["requires_openai_auth"] == true, ctyp == familyOpenAI && calias == "codex":
				ctyp, calias = "openai-codex", alias
			case ctyp == typ:
				continue
			case calias != alias && alias != "default":
				calias += "_" + alias
			}
			if ctyp == typ && calias == alias {
				continue
			}
			ct := subtree(models, ctyp)
			if ct == nil {
				continue
			}
			calias = uniqueKey(ct, calias)
			ct[calias] = pt[alias]
			delete(pt, alias)
			if len(pt) == 0 {
				delete(models, typ)
			}
			renames[typ+"."+alias] = ctyp + "." + calias
		}
	}
	out := tree{}
	keep := func(typ, alias string, v any) {
		if t := subtree(out, typ); t != nil {
			t[alias] = v
		}
	}
	// Entries already of a family keep their alias; the others take free aliases after them.
	for pass := 0; pass < 2; pass++ {
		for _, typ := range sortedKeys(models) {
			native := typ == familyEcho || typ == familyOpenAI || typ == familyOllama || typ == familyAnthropic
			if native != (pass == 0) {
				continue
			}
			pt, ok := asTree(models[typ])
			if !ok {
				out[typ] = models[typ]
				continue
			}
			for _, alias := range sortedKeys(pt) {
				entry, ok := asTree(pt[alias])
				if !ok {
					keep(typ, alias, pt[alias])
					continue
				}
				fam, reason := familyOf(typ, alias, entry)
				if reason != "" {
					keep(typ, alias, entry)
					m.warn("providers.models.%s.%s is not used: %s", typ, alias, reason)
					continue
				}
				newAlias := alias
				if fam != typ {
					if alias == "default" {
						newAlias = typ
					} else {
						newAlias = typ + "_" + alias
					}
					ft, _ := asTree(out[fam])
					newAlias = uniqueKey(ft, newAlias)
					if _, ok := entry["uri"]; !ok {
						entry["uri"] = openAICompatible[typ]
					}
					renames[typ+"."+alias] = fam + "." + newAlias
					for from, to := range renames {
						if to == typ+"."+alias {
							renames[from] = fam + "." + newAlias
						}
					}
					m.note("providers.models.%s.%s is served by the openai family as providers.models.%s.%s", typ, alias, fam, newAlias)
				}
				if uri, ok := entry["uri"].(string); ok {
					if cut, found := strings.CutSuffix(strings.TrimRight(uri, "/"), endpointSuffix[fam]); found && endpointSuffix[fam] != "" {
						entry["uri"] = cut
						m.note("providers.models.%s.%s.uri cut to its base URL %s (requests add %s)", fam, newAlias, cut, endpointSuffix[fam])
					}
				}
				keep(fam, newAlias, entry)
			}
		}
	}
	p["models"] = out
	m.warnUnenforced(root)
	rewrite := func(t tree) {
		if ref, ok := t["model_provider"].(string); ok {
			if to, ok := renames[ref]; ok {
				t["model_provider"] = to
			}
		}
	}
	if agents, ok := asTree(root["agents"]); ok {
		for _, a := range agents {
			if at, ok := asTree(a); ok {
				rewrite(at)
			}
		}
	}
	for _, k := range []string{"model_routes", "embedding_routes"} {
		if routes, ok := root[k].([]any); ok {
			for _, r := range routes {
				if rt, ok := asTree(r); ok {
					rewrite(rt)
				}
			}
		}
	}
}

// unenforcedRiskKeys are upstream risk profile settings this runtime does not enforce; their absence can let
// more through than upstream did, so each is named in a warning rather than only listed as unknown.
var unenforcedRiskKeys = []string{"allowed_commands", "allowed_roots", "block_high_risk_commands",
	"require_approval_for_medium_risk", "shell_env_passthrough", "max_actions_per_hour", "sandbox_enabled"}

func (m *migration) warnUnenforced(root tree) {
	profiles, _ := asTree(root["risk_profiles"])
	for _, name := range sortedKeys(profiles) {
		pt, _ := asTree(profiles[name])
		for _, k := range unenforcedRiskKeys {
			if _, ok := pt[k]; ok {
				m.warn("risk_profiles.%s.%s is not enforced by this runtime (shell and file tools follow level, "+
					"auto_approve, always_ask, blocked_commands and forbidden_paths)", name, k)
			}
		}
	}
}
