package upstream

import "strings"

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
func (m *migration) aliasProviderModels(v any) tree {
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
func (m *migration) foldProviderGlobals(np, models tree) {
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
func (m *migration) renameRouteProviderField(t tree, key string) {
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

func (m *migration) foldTTS(in, np tree) {
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

func (m *migration) foldTranscription(in, np tree) {
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
