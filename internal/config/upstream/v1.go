package upstream

import "fmt"

// v1ToV2 folds the top-level provider globals of v1 into [providers] and renames channels_config.
func (m *migration) v1ToV2(in tree) (tree, error) {
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
