package quickstart

import (
	"fmt"
	"maps"
	"slices"

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
		Channels:              []string{},
		UnassignedChannels:    []string{},
		Storage:               []string{},
		ModelProviderTypes:    []api.QuickstartTypeOption{},
		ChannelTypes:          []api.QuickstartTypeOption{},
		RiskPresets:           []api.QuickstartPreset{},
		RuntimePresets:        slices.Clone(runtimePresets),
		MemoryKinds:           slices.Clone(MemoryKinds),
		PersonalityFiles:      slices.Clone(PersonalityFiles),
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

// ShouldAutoLaunch is upstream's rule for opening the quickstart by itself: never completed, and no agent.
func ShouldAutoLaunch(cfg *config.Config) bool {
	return !cfg.OnboardState.QuickstartCompleted && len(cfg.Agents) == 0
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
	case api.QuickstartSectionChannel, api.QuickstartSectionPeerGroup:
		return []api.QuickstartField{}, nil // no channel family can be created here yet
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
