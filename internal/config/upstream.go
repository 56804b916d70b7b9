package config

import (
	"fmt"
	"slices"
	"strings"
)

// The rules below turn an upstream schema v1 or v2 config into upstream's schema v3, step by step as upstream
// does it (crates/zeroclaw-config: migration.rs, schema/v1.rs, schema/v2.rs), on a plain TOML tree. Sections
// this runtime does not model (channels, cron, storage, tts...) are migrated too, so that `config migrate`
// writes what upstream would write; decoding then reports them as unknown keys. Where upstream depends on a
// map's iteration order ("the first provider"), these rules take the sorted order, except that the default
// agent is bound to the provider the v1/v2 globals named, which is the provider an old install ran with.

// tree is a decoded TOML table.
type tree = map[string]any

// upstreamMigration collects what one migration did: notes (what moved where) and warnings (what was dropped
// or cannot be used here).
type upstreamMigration struct {
	notes    []string
	warnings []string
	// target is the "<type>.<alias>" the v1/v2 provider globals were folded onto, when they were.
	target string
}

func (m *upstreamMigration) note(format string, args ...any) {
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}

func (m *upstreamMigration) warn(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

func asTree(v any) (tree, bool) {
	t, ok := v.(map[string]any)
	return t, ok
}

// take removes key from t and returns its value.
func take(t tree, key string) (any, bool) {
	v, ok := t[key]
	if ok {
		delete(t, key)
	}
	return v, ok
}

// subtree returns t[key] as a table, creating it when absent; nil when the key holds something else.
func subtree(t tree, key string) tree {
	v, ok := t[key]
	if !ok {
		n := tree{}
		t[key] = n
		return n
	}
	n, _ := asTree(v)
	return n
}

func orInsert(t tree, key string, v any) {
	if _, ok := t[key]; !ok {
		t[key] = v
	}
}

func stringOf(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// foldStringIntoArray moves a non-empty string at from into the array at to (no duplicate); it reports whether
// it did. A non-string at from stays where it is.
func foldStringIntoArray(t tree, from, to string) bool {
	v, ok := t[from]
	if !ok {
		return false
	}
	s, isStr := v.(string)
	if !isStr {
		return false
	}
	delete(t, from)
	if s == "" {
		return false
	}
	cur, exists := t[to]
	if !exists {
		t[to] = []any{s}
		return true
	}
	arr, ok := cur.([]any)
	if !ok {
		t[from] = s
		return false
	}
	if !slices.ContainsFunc(arr, func(x any) bool { return x == s }) {
		t[to] = append(arr, s)
	}
	return true
}

// migrateUpstream migrates root (schema version from, 1 or 2) to upstream's schema v3 in place.
func migrateUpstream(root tree, from int) (tree, *upstreamMigration, error) {
	m := &upstreamMigration{}
	var err error
	if from <= 1 {
		if root, err = m.v1ToV2(root); err != nil {
			return nil, m, err
		}
	}
	out, err := m.v2ToV3(root)
	return out, m, err
}

// v1ToV2 folds the top-level provider globals of v1 into [providers] and renames channels_config.
func (m *upstreamMigration) v1ToV2(in tree) (tree, error) {
	delete(in, "schema_version")
	single := func(keys ...string) (any, bool) {
		var val any
		found := false
		for _, k := range keys {
			if v, ok := take(in, k); ok && !found {
				val, found = v, true
			}
		}
		return val, found
	}
	apiKey, hasAPIKey := single("api_key")
	apiURL, hasAPIURL := single("api_url")
	apiPath, hasAPIPath := single("api_path")
	defProvider, hasDefProvider := single("default_provider", "model_provider")
	defModel, hasDefModel := single("default_model", "model")
	temp, hasTemp := single("default_temperature")
	timeout, hasTimeout := single("provider_timeout_secs")
	maxTokens, hasMaxTokens := single("provider_max_tokens")
	tableOf := func(key string) (tree, error) {
		v, ok := take(in, key)
		if !ok {
			return tree{}, nil
		}
		t, ok := asTree(v)
		if !ok {
			return nil, fmt.Errorf("%s must be a table in a schema v1 config", key)
		}
		return t, nil
	}
	arrayOf := func(key string) ([]any, error) {
		v, ok := take(in, key)
		if !ok {
			return nil, nil
		}
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s must be an array in a schema v1 config", key)
		}
		return a, nil
	}
	modelProviders, err := tableOf("model_providers")
	if err != nil {
		return nil, err
	}
	extraHeaders, err := tableOf("extra_headers")
	if err != nil {
		return nil, err
	}
	modelRoutes, err := arrayOf("model_routes")
	if err != nil {
		return nil, err
	}
	embeddingRoutes, err := arrayOf("embedding_routes")
	if err != nil {
		return nil, err
	}
	channelsConfig, hasChannels := take(in, "channels_config")

	hasProviderData := hasDefProvider || hasDefModel || hasAPIKey || hasAPIURL || hasAPIPath || hasTemp ||
		hasTimeout || hasMaxTokens || len(extraHeaders) > 0 || len(modelProviders) > 0 || len(modelRoutes) > 0 ||
		len(embeddingRoutes) > 0
	var providers tree
	if hasProviderData {
		// v1 fell back to openrouter when default_provider was unset.
		key := "openrouter"
		if s, ok := stringOf(defProvider); ok {
			key = s
		}
		models := modelProviders
		if hasAPIKey || hasAPIURL || hasAPIPath || hasDefModel || hasTemp || hasTimeout || hasMaxTokens || len(extraHeaders) > 0 {
			entry, ok := asTree(models[key])
			if !ok {
				entry = tree{}
			}
			// A value set on the provider's own entry wins over the global, as in v1.
			for _, f := range []struct {
				key string
				val any
				set bool
			}{{"api_key", apiKey, hasAPIKey}, {"base_url", apiURL, hasAPIURL}, {"api_path", apiPath, hasAPIPath},
				{"model", defModel, hasDefModel}, {"temperature", temp, hasTemp}, {"timeout_secs", timeout, hasTimeout},
				{"max_tokens", maxTokens, hasMaxTokens}} {
				if f.set {
					orInsert(entry, f.key, f.val)
				}
			}
			if len(extraHeaders) > 0 {
				orInsert(entry, "extra_headers", extraHeaders)
			}
			models[key] = entry
			m.note("v1 provider globals folded into providers.models.%s", key)
		}
		providers = tree{"fallback": key}
		if len(models) > 0 {
			providers["models"] = models
		}
		if len(modelRoutes) > 0 {
			providers["model_routes"] = modelRoutes
		}
		if len(embeddingRoutes) > 0 {
			providers["embedding_routes"] = embeddingRoutes
		}
	}
	if hasChannels {
		if ch, ok := asTree(channelsConfig); ok {
			if matrix, ok := asTree(ch["matrix"]); ok && foldStringIntoArray(matrix, "room_id", "allowed_rooms") {
				m.note("channels.matrix.room_id folded into channels.matrix.allowed_rooms")
			}
			if slack, ok := asTree(ch["slack"]); ok && foldStringIntoArray(slack, "channel_id", "channel_ids") {
				m.note("channels.slack.channel_id folded into channels.slack.channel_ids")
			}
		}
		in["channels"] = channelsConfig
		m.note("channels_config renamed to channels")
	}
	for _, k := range []string{"swarms", "agents"} {
		if v, ok := in[k]; ok {
			if _, isTable := asTree(v); !isTable {
				delete(in, k)
				m.warn("%s dropped: it is not a table", k)
			}
		}
	}
	// A v1 file that already had a [providers] table: its keys are merged under the synthesized ones.
	if user, ok := take(in, "providers"); ok {
		if ut, isTable := asTree(user); isTable {
			for k, v := range providers {
				ut[k] = v
			}
			if len(ut) > 0 {
				providers = ut
			}
		}
	}
	if providers != nil {
		in["providers"] = providers
	}
	return in, nil
}

// v2ToV3 applies upstream's V2 → V3 rules.
func (m *upstreamMigration) v2ToV3(in tree) (tree, error) {
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

func (m *upstreamMigration) foldSecurityIntoRiskProfile(in tree) {
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

// splitColonURL splits "custom:https://..." and "anthropic-custom:https://..." into the type and the URL.
func splitColonURL(raw string) (string, string) {
	if prefix, url, ok := strings.Cut(raw, ":"); ok && (prefix == "custom" || prefix == "anthropic-custom") &&
		(strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://")) {
		return prefix, url
	}
	return raw, ""
}

type extra struct {
	key string
	val any
}

var providerSynonyms = map[string]string{
	"azure_openai": "azure", "azure-openai": "azure", "azure": "azure",
	"xai": "xai", "grok": "xai",
	"gemini": "gemini", "google": "gemini", "google-gemini": "gemini",
	"together": "together", "together-ai": "together",
	"fireworks": "fireworks", "fireworks-ai": "fireworks",
	"vercel": "vercel", "vercel-ai": "vercel",
	"cloudflare": "cloudflare", "cloudflare-ai": "cloudflare",
	"nvidia": "nvidia", "nvidia-nim": "nvidia", "build.nvidia.com": "nvidia",
	"bedrock": "bedrock", "aws-bedrock": "bedrock",
	"lmstudio": "lmstudio", "lm-studio": "lmstudio",
	"litellm": "litellm", "lite-llm": "litellm",
	"huggingface": "huggingface", "hf": "huggingface",
	"yi": "yi", "01ai": "yi", "lingyiwanwu": "yi",
	"hunyuan": "hunyuan", "tencent": "hunyuan",
	"qianfan": "qianfan", "baidu": "qianfan",
	"copilot": "copilot", "github-copilot": "copilot",
	"ovhcloud": "ovh", "ovh": "ovh",
	"opencode": "opencode", "opencode-zen": "opencode",
	"llamacpp": "llamacpp", "llama.cpp": "llamacpp",
	"deepmyst": "deepmyst", "deep-myst": "deepmyst",
	"siliconflow": "siliconflow", "silicon-flow": "siliconflow",
	"deepinfra": "deepinfra", "deep-infra": "deepinfra",
	"ai21": "ai21", "ai21-labs": "ai21",
	"friendli": "friendli", "friendliai": "friendli",
	"lepton": "lepton", "lepton-ai": "lepton",
	"lambda_ai": "lambda_ai", "lambda-ai": "lambda_ai",
	"github_models": "github_models", "github-models": "github_models",
	"stepfun": "stepfun", "step": "stepfun",
	"kilocli": "kilocli", "kilo-cli": "kilocli",
}

// regionalProviders are upstream's regional and OAuth variants: raw type => canonical type and extra fields.
var regionalProviders = func() map[string]struct {
	typ    string
	extras []extra
} {
	out := map[string]struct {
		typ    string
		extras []extra
	}{}
	add := func(typ string, extras []extra, names ...string) {
		for _, n := range names {
			out[n] = struct {
				typ    string
				extras []extra
			}{typ, extras}
		}
	}
	ep := func(v string) extra { return extra{"endpoint", v} }
	oauth := extra{"auth_mode", "oauth"}
	add("moonshot", []extra{ep("intl")}, "moonshot-intl", "moonshot-global", "kimi-intl", "kimi-global")
	add("moonshot", []extra{ep("cn")}, "moonshot", "kimi", "moonshot-cn", "kimi-cn")
	add("moonshot", []extra{ep("code")}, "kimi-code", "kimi_coding", "kimi_for_coding")
	add("qwen", []extra{ep("cn")}, "qwen-cn", "dashscope", "qwen", "dashscope-cn")
	add("qwen", []extra{ep("intl")}, "qwen-intl", "dashscope-intl", "qwen-international", "dashscope-international")
	add("qwen", []extra{ep("us")}, "qwen-us", "dashscope-us")
	add("qwen", []extra{ep("code"), oauth}, "qwen-code", "qwen-oauth", "qwen_oauth")
	add("qwen", []extra{ep("cn")}, "bailian", "aliyun-bailian", "aliyun")
	add("glm", []extra{ep("global")}, "glm", "zhipu", "glm-global", "zhipu-global")
	add("glm", []extra{ep("cn")}, "glm-cn", "zhipu-cn", "bigmodel")
	add("zai", []extra{ep("global")}, "zai", "z.ai", "zai-global", "z.ai-global")
	add("zai", []extra{ep("cn")}, "zai-cn", "z.ai-cn")
	add("minimax", []extra{ep("intl")}, "minimax", "minimax-intl", "minimax-io", "minimax-global", "minimax-portal",
		"minimax-portal-global")
	add("minimax", []extra{ep("intl"), oauth}, "minimax-oauth", "minimax-oauth-global")
	add("minimax", []extra{ep("cn")}, "minimax-cn", "minimaxi", "minimax-portal-cn")
	add("minimax", []extra{ep("cn"), oauth}, "minimax-oauth-cn")
	add("doubao", nil, "doubao", "volcengine", "ark", "doubao-cn")
	add("gemini_cli", nil, "gemini-cli")
	add("stepfun", []extra{{"uri", "https://api.stepfun.com/intl/v1"}}, "stepfun-intl", "step-intl")
	return out
}()

// normalizeProviderType maps a v2 provider name onto upstream's v3 type, alias and extra fields.
func normalizeProviderType(raw, alias string) (string, string, []extra) {
	if c, ok := providerSynonyms[raw]; ok {
		return c, alias, nil
	}
	switch raw {
	case "opencode-go":
		return "opencode", "go", nil
	case "openai-codex", "openai_codex", "codex":
		return "openai", "codex", []extra{{"wire_api", "responses"}, {"requires_openai_auth", true}}
	case "claude-code":
		return "anthropic", "claude-code", nil
	case "anthropic-custom":
		return "anthropic", "custom", nil
	case "custom":
		return "custom", alias, nil
	}
	if r, ok := regionalProviders[raw]; ok {
		return r.typ, alias, r.extras
	}
	return raw, alias, nil
}

// aliasProviderModels turns v2's flat providers.models.<name> into v3's providers.models.<type>.<alias>.
func (m *upstreamMigration) aliasProviderModels(v any) tree {
	flat, ok := asTree(v)
	out := tree{}
	if !ok {
		return out
	}
	for _, id := range sortedKeys(flat) {
		cfg := flat[id]
		raw, url := splitColonURL(id)
		ct, isTable := asTree(cfg)
		if isTable {
			if url != "" {
				orInsert(ct, "uri", url)
			}
			foldBaseURLIntoURI(ct)
		}
		typ, alias, extras := normalizeProviderType(raw, "default")
		if isTable {
			for _, e := range extras {
				orInsert(ct, e.key, e.val)
			}
		}
		if t := subtree(out, typ); t != nil {
			t[alias] = cfg
		}
		if typ != id {
			m.note("providers.models.%s became providers.models.%s.%s", id, typ, alias)
		}
	}
	return out
}

// foldBaseURLIntoURI replaces v2's base_url (+ api_path) with v3's uri; an existing uri wins.
func foldBaseURLIntoURI(e tree) {
	if _, ok := e["uri"]; ok {
		delete(e, "base_url")
		delete(e, "api_path")
		return
	}
	base, _ := take(e, "base_url")
	b, ok := base.(string)
	if !ok || b == "" {
		delete(e, "api_path")
		return
	}
	path, _ := take(e, "api_path")
	if p, ok := path.(string); ok && p != "" {
		b = joinURLPath(b, p)
	}
	e["uri"] = b
}

func joinURLPath(base, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return strings.TrimRight(base, "/") + path
}

// foldProviderGlobals moves v2's [providers] globals onto the provider they name.
func (m *upstreamMigration) foldProviderGlobals(np, models tree) {
	get := func(k string) (any, bool) { return take(np, k) }
	apiKey, hasKey := get("api_key")
	apiURL, hasURL := get("api_url")
	apiPath, hasPath := get("api_path")
	defProvider, hasDefProvider := get("default_provider")
	defModel, hasModel := get("default_model")
	temp, hasTemp := get("default_temperature")
	timeout, hasTimeout := get("provider_timeout_secs")
	maxTokens, hasMax := get("provider_max_tokens")
	headers, hasHeaders := get("extra_headers")
	anyValue := hasKey || hasURL || hasPath || hasModel || hasTemp || hasTimeout || hasMax || hasHeaders
	if !anyValue && !hasDefProvider {
		return
	}
	var typ, alias, colonURL string
	var extras []extra
	if s, ok := defProvider.(string); ok {
		raw, url := splitColonURL(s)
		typ, alias, extras = normalizeProviderType(raw, "default")
		colonURL = url
	} else if keys := sortedKeys(models); len(keys) > 0 {
		typ, alias = keys[0], "default"
	} else {
		typ, alias = "openrouter", "default"
	}
	pt := subtree(models, typ)
	if pt == nil {
		return
	}
	at := subtree(pt, alias)
	if at == nil {
		return
	}
	m.target = typ + "." + alias
	var base any
	hasBase := false
	if colonURL != "" {
		base, hasBase = colonURL, true
	} else if hasURL {
		base, hasBase = apiURL, true
	}
	var uri any
	hasURI := false
	if hasBase {
		b, bs := base.(string)
		p, ps := apiPath.(string)
		if bs && ps && hasPath {
			uri = joinURLPath(b, p)
		} else {
			uri = base
		}
		hasURI = true
	}
	for _, f := range []struct {
		key string
		val any
		set bool
	}{{"api_key", apiKey, hasKey}, {"uri", uri, hasURI}, {"model", defModel, hasModel}, {"temperature", temp, hasTemp},
		{"timeout_secs", timeout, hasTimeout}, {"max_tokens", maxTokens, hasMax}, {"extra_headers", headers, hasHeaders}} {
		if f.set {
			orInsert(at, f.key, f.val)
		}
	}
	for _, e := range extras {
		orInsert(at, e.key, e.val)
	}
	if anyValue {
		m.note("[providers] globals folded into providers.models.%s.%s", typ, alias)
	}
}

// renameRouteProviderField renames a route's provider to model_provider, as "<type>.default" when bare.
func (m *upstreamMigration) renameRouteProviderField(t tree, key string) {
	routes, ok := t[key].([]any)
	if !ok {
		return
	}
	for _, r := range routes {
		rt, ok := asTree(r)
		if !ok {
			continue
		}
		if _, ok := rt["model_provider"]; ok {
			delete(rt, "provider")
		} else if v, ok := take(rt, "provider"); ok {
			rt["model_provider"] = v
		}
		if s, ok := rt["model_provider"].(string); ok && s != "" && !strings.Contains(s, ".") {
			rt["model_provider"] = s + ".default"
		}
	}
}

func (m *upstreamMigration) foldTTS(in, np tree) {
	tts, ok := asTree(in["tts"])
	if !ok {
		return
	}
	aliased := tree{}
	for _, ty := range []string{"openai", "elevenlabs", "google", "edge", "piper"} {
		v, ok := take(tts, ty)
		if !ok {
			continue
		}
		if vt, isTable := asTree(v); isTable && ty == "elevenlabs" {
			if id, ok := take(vt, "model_id"); ok {
				orInsert(vt, "model", id)
			}
		}
		aliased[ty] = tree{"default": v}
	}
	if _, ok := take(tts, "default_provider"); ok {
		m.note("tts.default_provider dropped (schema v3 chooses it per agent)")
	}
	if len(aliased) > 0 {
		np["tts"] = aliased
		m.note("[tts.<type>] moved to [providers.tts.<type>.default]")
	}
}

func (m *upstreamMigration) foldTranscription(in, np tree) {
	tr, ok := asTree(in["transcription"])
	if !ok {
		return
	}
	aliased := tree{}
	for _, fam := range []string{"openai", "deepgram", "assemblyai", "google", "local_whisper"} {
		if v, ok := take(tr, fam); ok {
			aliased[fam] = tree{"default": v}
		}
	}
	groq := tree{}
	for _, f := range []string{"api_key", "api_url", "model", "language", "initial_prompt"} {
		if v, ok := take(tr, f); ok {
			groq[f] = v
		}
	}
	if len(groq) > 0 {
		aliased["groq"] = tree{"default": groq}
	}
	for _, k := range []string{"default_provider", "default_model_provider", "default_transcription_provider"} {
		if _, ok := take(tr, k); ok {
			m.note("transcription.%s dropped (schema v3 chooses it per agent)", k)
		}
	}
	if len(aliased) > 0 {
		if ex := subtree(np, "transcription"); ex != nil {
			for k, v := range aliased {
				orInsert(ex, k, v)
			}
		}
		m.note("[transcription.<family>] moved to [providers.transcription.<family>.default]")
	}
}

func (m *upstreamMigration) foldStorage(in tree) {
	var qdrant, postgres, sqliteTimeout, provider any
	var hasQ, hasP, hasT, hasProv bool
	if mem, ok := asTree(in["memory"]); ok {
		qdrant, hasQ = take(mem, "qdrant")
		postgres, hasP = take(mem, "postgres")
		sqliteTimeout, hasT = take(mem, "sqlite_open_timeout_secs")
	}
	if st, ok := asTree(in["storage"]); ok {
		provider, hasProv = take(st, "provider")
	}
	if !hasQ && !hasP && !hasT && !hasProv {
		return
	}
	storage := subtree(in, "storage")
	if storage == nil {
		return
	}
	mergeDefault := func(backend string, fields tree) {
		if b := subtree(storage, backend); b != nil {
			if d := subtree(b, "default"); d != nil {
				for k, v := range fields {
					orInsert(d, k, v)
				}
			}
		}
	}
	if q, ok := asTree(qdrant); ok {
		mergeDefault("qdrant", q)
		m.note("[memory.qdrant] moved to [storage.qdrant.default]")
	}
	if hasT {
		mergeDefault("sqlite", tree{"open_timeout_secs": sqliteTimeout})
		m.note("memory.sqlite_open_timeout_secs moved to storage.sqlite.default.open_timeout_secs")
	}
	if p, ok := asTree(postgres); ok {
		mergeDefault("postgres", p)
		m.note("[memory.postgres] moved to [storage.postgres.default]")
	}
	if pt, ok := asTree(provider); ok {
		cfg := pt
		if inner, ok := asTree(pt["config"]); ok {
			delete(pt, "config")
			cfg = inner
		}
		if len(cfg) > 0 {
			typ, fields := adaptStorageProvider(cfg)
			if len(fields) > 0 {
				mergeDefault(typ, fields)
				m.note("[storage.provider.config] moved to [storage.%s.default]", typ)
			}
		}
	}
	for _, k := range []string{"memory", "storage"} {
		if t, ok := asTree(in[k]); ok && len(t) == 0 {
			delete(in, k)
		}
	}
}

func adaptStorageProvider(cfg tree) (string, tree) {
	typ := "sqlite"
	if v, ok := take(cfg, "provider"); ok {
		if s, ok := v.(string); ok && s != "" {
			typ = s
		}
	}
	switch typ {
	case "sqlite":
		out := tree{}
		if v, ok := take(cfg, "db_url"); ok {
			if s, ok := v.(string); ok {
				path := s
				if p, ok := strings.CutPrefix(s, "sqlite://"); ok {
					path = p
				} else if p, ok := strings.CutPrefix(s, "sqlite:"); ok {
					path = p
				}
				if path != "" {
					out["path"] = path
				}
			}
		}
		if v, ok := take(cfg, "connect_timeout_secs"); ok {
			out["open_timeout_secs"] = v
		}
		return typ, out
	case "qdrant":
		out := tree{}
		if v, ok := take(cfg, "db_url"); ok {
			out["url"] = v
		}
		return typ, out
	}
	return typ, cfg
}

var v3ChannelTypes = []string{"telegram", "discord", "slack", "mattermost", "webhook", "imessage", "matrix", "signal",
	"whatsapp", "linq", "nextcloud_talk", "email", "gmail_push", "irc", "twitch", "lark", "line", "dingtalk", "wecom",
	"wecom_ws", "wechat", "qq", "twitter", "mochat", "nostr", "clawdtalk", "reddit", "bluesky", "git", "voice_call",
	"voice_wake", "voice_duplex", "mqtt", "amqp", "filesystem"}

func (m *upstreamMigration) aliasWrapChannels(v any, peerGroups tree) tree {
	ch, ok := asTree(v)
	out := tree{}
	if !ok {
		return out
	}
	if cli, ok := take(ch, "cli"); ok {
		out["cli"] = cli
	}
	m.foldDiscordHistory(ch)
	var feishu tree
	if f, ok := take(ch, "feishu"); ok {
		if ft, isTable := asTree(f); isTable {
			feishu = ft
		} else {
			m.warn("[channels.feishu] dropped: it is not a table")
		}
	}
	for _, ct := range v3ChannelTypes {
		val, ok := take(ch, ct)
		if !ok {
			continue
		}
		inst, isTable := asTree(val)
		if !isTable {
			out[ct] = tree{"default": val}
			continue
		}
		m.channelFolds(ct, inst)
		m.foldPeerAuth(ct, inst, peerGroups)
		out[ct] = tree{"default": inst}
	}
	for k, v := range ch {
		out[k] = v
	}
	if feishu != nil {
		feishu["use_feishu"] = true
		lark := subtree(out, "lark")
		switch {
		case lark == nil:
			m.warn("[channels.lark] is not a table: [channels.feishu] dropped")
		case lark["feishu"] != nil:
			m.warn("[channels.lark.feishu] already exists: [channels.feishu] dropped")
		default:
			lark["feishu"] = feishu
			m.note("[channels.feishu] moved to [channels.lark.feishu]")
		}
	}
	return out
}

func (m *upstreamMigration) foldDiscordHistory(ch tree) {
	hist, ok := take(ch, "discord_history")
	if !ok {
		return
	}
	ht, _ := asTree(hist)
	d, _ := asTree(ch["discord"])
	dTok, dHas := d["bot_token"].(string)
	hTok, hHas := ht["bot_token"].(string)
	conflict := dHas && hHas && dTok != hTok
	hEnabled, _ := ht["enabled"].(bool)
	dEnabled, _ := d["enabled"].(bool)
	disc := subtree(ch, "discord")
	if disc != nil {
		disc["archive"] = true
		for k, v := range ht {
			if k != "enabled" {
				orInsert(disc, k, v)
			}
		}
		disc["enabled"] = dEnabled || hEnabled
	}
	m.note("[channels.discord_history] folded into [channels.discord] with archive = true")
	if conflict {
		m.warn("channels.discord_history.bot_token differed from channels.discord.bot_token: the discord_history token was dropped")
	}
}

func (m *upstreamMigration) channelFolds(ct string, inst tree) {
	switch ct {
	case "discord":
		foldStringIntoArray(inst, "guild_id", "guild_ids")
	case "mattermost":
		foldStringIntoArray(inst, "channel_id", "channel_ids")
	case "reddit":
		foldStringIntoArray(inst, "subreddit", "subreddits")
	case "signal":
		v, ok := inst["group_id"].(string)
		if !ok {
			return
		}
		delete(inst, "group_id")
		if v == "" {
			return
		}
		if v == "dm" {
			inst["dm_only"] = true
			return
		}
		arr, _ := inst["group_ids"].([]any)
		if _, exists := inst["group_ids"]; exists && arr == nil {
			return
		}
		if !slices.ContainsFunc(arr, func(x any) bool { return x == v }) {
			inst["group_ids"] = append(arr, v)
		}
	}
}

func peerAuthField(ct string) string {
	switch ct {
	case "telegram", "discord", "slack", "mattermost", "matrix", "nextcloud_talk", "irc", "lark", "line", "feishu",
		"dingtalk", "wecom", "wechat", "qq", "twitter", "mochat":
		return "allowed_users"
	case "imessage":
		return "allowed_contacts"
	case "signal":
		return "allowed_from"
	case "whatsapp":
		return "allowed_numbers"
	case "linq", "email", "gmail_push":
		return "allowed_senders"
	case "nostr":
		return "allowed_pubkeys"
	}
	return ""
}

func (m *upstreamMigration) foldPeerAuth(ct string, inst, peerGroups tree) {
	field := peerAuthField(ct)
	if field == "" {
		return
	}
	v, ok := take(inst, field)
	if !ok {
		return
	}
	arr, ok := v.([]any)
	if !ok {
		return
	}
	var peers []any
	for _, x := range arr {
		if s, ok := x.(string); ok {
			if s = strings.TrimSpace(s); s != "" && s != "*" {
				peers = append(peers, s)
			}
		}
	}
	if len(peers) == 0 {
		return
	}
	name := ct + "_default"
	if _, exists := peerGroups[name]; exists {
		return
	}
	peerGroups[name] = tree{"channel": ct, "agents": []any{"default"}, "external_peers": peers}
	m.note("channels.%s.%s moved to [peer_groups.%s]", ct, field, name)
}

func (m *upstreamMigration) restructureCron(v any) (tree, tree) {
	jobs, scheduler := tree{}, tree{}
	ct, ok := asTree(v)
	if !ok {
		return jobs, scheduler
	}
	if list, ok := take(ct, "jobs"); ok {
		if arr, ok := list.([]any); ok {
			for i, job := range arr {
				jt, isTable := asTree(job)
				key := fmt.Sprintf("job_%d", i+1)
				if n, ok := jt["name"].(string); ok {
					key = slugify(n)
				} else if id, ok := jt["id"].(string); ok {
					key = id
				}
				key = uniqueKey(jobs, key)
				if isTable {
					delete(jt, "id")
					if d, ok := asTree(jt["delivery"]); ok {
						if c, ok := d["channel"].(string); ok && !strings.Contains(c, ".") {
							d["channel"] = c + ".default"
						}
					}
				}
				jobs[key] = job
			}
		}
	}
	for _, k := range []string{"enabled", "catch_up_on_startup", "max_run_history"} {
		if v, ok := take(ct, k); ok {
			scheduler[k] = v
		}
	}
	if len(ct) > 0 {
		m.warn("[cron] keys dropped (not in schema v3): %s", strings.Join(sortedKeys(ct), ", "))
	}
	m.note("[cron] jobs moved to [cron.<name>], subsystem settings to [scheduler]")
	return jobs, scheduler
}

// slugify lowercases s and turns every run of other characters than letters and digits into one underscore.
func slugify(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127 && isLetterOrDigit(r) {
			b.WriteString(strings.ToLower(string(r)))
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}

func isLetterOrDigit(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }

func uniqueKey(t tree, key string) string {
	if _, ok := t[key]; !ok {
		return key
	}
	for n := 2; ; n++ {
		c := fmt.Sprintf("%s_%d", key, n)
		if _, ok := t[c]; !ok {
			return c
		}
	}
}

// synthesizeAgentBrains moves each v2 agent's inline provider settings onto a provider entry of its own and
// its runtime settings onto profiles of its own.
func (m *upstreamMigration) synthesizeAgentBrains(agents, root tree) tree {
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
func (m *upstreamMigration) synthesizeDefaultAgent(root tree) tree {
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

func (m *upstreamMigration) liftIdentity(root tree) {
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

func (m *upstreamMigration) backfillHeartbeatAgent(root tree) {
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

func (m *upstreamMigration) rewriteDanglingPeerGroupAgents(root tree) {
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

func (m *upstreamMigration) renameSubkey(root tree, parent, inner, repl string) {
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

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
