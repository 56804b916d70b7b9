package quickstart

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// State is quickstart/state for cfg: what is configured (sorted) and what a run can create.
func State(cfg *config.Config) api.QuickstartState {
	st := api.QuickstartState{
		QuickstartCompleted:   cfg.OnboardState.QuickstartCompleted,
		Agents:                sortedKeys(cfg.Agents),
		RiskProfiles:          sortedKeys(cfg.RiskProfiles),
		RuntimeProfiles:       []string{},
		DefaultRuntimeProfile: DefaultRuntimeProfile,
		ModelProviders:        providerRefs(cfg),
		Channels:              channelRefs(cfg),
		UnassignedChannels:    []string{},
		Storage:               []string{},
		ModelProviderTypes:    []api.QuickstartTypeOption{},
		ChannelTypes:          []api.QuickstartTypeOption{{Kind: channelTelegram, DisplayName: "Telegram"}},
		RiskPresets:           []api.QuickstartPreset{},
		RuntimePresets:        slices.Clone(runtimePresets),
		MemoryKinds:           slices.Clone(MemoryKinds),
		PersonalityFiles:      slices.Clone(PersonalityFiles),
	}
	for _, ref := range st.Channels {
		if boundTo(cfg, ref) == "" {
			st.UnassignedChannels = append(st.UnassignedChannels, ref)
		}
	}
	for _, alias := range sortedKeys(cfg.Storage.Postgres) {
		st.Storage = append(st.Storage, "postgres."+alias)
	}
	for _, p := range providerTypes {
		st.ModelProviderTypes = append(st.ModelProviderTypes, p.row)
	}
	for _, p := range riskPresets {
		st.RiskPresets = append(st.RiskPresets, p.row)
	}
	return st
}

func providerRefs(cfg *config.Config) []string {
	out := []string{}
	for _, fam := range sortedKeys(cfg.Providers.Models) {
		for _, alias := range sortedKeys(cfg.Providers.Models[fam]) {
			out = append(out, fam+"."+alias)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Fields is quickstart/fields: the fields of a "create new" form for typeKey in section, in the order a form
// asks them. An unknown type has none; an unknown section is ErrInvalid. Secrets never carry a default.
func Fields(section, typeKey string) ([]api.QuickstartField, error) {
	switch section {
	case api.QuickstartSectionModelProvider:
	case api.QuickstartSectionChannel:
		if strings.ToLower(typeKey) != channelTelegram {
			return []api.QuickstartField{}, nil
		}
		return []api.QuickstartField{{Key: "bot_token", Label: "bot_token", Kind: "string", IsSecret: true, Required: true,
			Help: "The bot's token from @BotFather (a secret, stored encrypted)."}}, nil
	case api.QuickstartSectionPeerGroup:
		str := func(s string) *string { return &s }
		return []api.QuickstartField{
			{Key: "channel", Label: "channel", Kind: "string", Required: true, Help: "The channel the group applies to, as <type>.<alias>."},
			{Key: "external_peers", Label: "external_peers", Kind: "string_array", Default: str("[]"),
				Help: "Platform user ids or @usernames allowed to talk to the agent (empty: nobody; * : anyone)."},
			{Key: "agents", Label: "agents", Kind: "string_array", Default: str("[]"), Help: "Agents the group's peers may talk to."},
			{Key: "ignore", Label: "ignore", Kind: "string_array", Default: str("[]"), Help: "Senders ignored even when external_peers lets them in."},
		}, nil
	default:
		return nil, fmt.Errorf("%w: unknown section %q (model_provider, channel or peer_group)", ErrInvalid, section)
	}
	p, ok := resolveType(typeKey)
	if !ok {
		return []api.QuickstartField{}, nil
	}
	str := func(s string) *string { return &s }
	model := api.QuickstartField{Key: "model", Label: "model", Help: "Model name requested from the provider.",
		Kind: "string", Required: true}
	if p.row.Kind == config.FamilyEcho {
		model.Default = str("echo")
		return []api.QuickstartField{model}, nil
	}
	out := []api.QuickstartField{model}
	if p.needsKey {
		out = append(out, api.QuickstartField{Key: "auth_mode", Label: "auth_mode",
			Help: "How the daemon authenticates to the provider: with an API key.", Kind: "enum",
			EnumVariants: &[]string{"api_key"}, Required: true, Default: str("api_key")})
	}
	out = append(out,
		api.QuickstartField{Key: "api_key", Label: "api_key", Help: "API key sent to the provider (a secret, stored encrypted).",
			Kind: "string", IsSecret: true},
		api.QuickstartField{Key: "uri", Label: "uri", Help: "Base URL of the provider's API; empty: " + p.defaultURI + ".",
			Kind: "string", Default: str(p.defaultURI)})
	return out, nil
}
