package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// CatalogFamily is one provider family the runtime speaks, with the models offered for it by default. The
// list is built in (never fetched from a backend): a starting point for pickers, not a statement of what the
// backend serves.
type CatalogFamily struct {
	Name        string
	DisplayName string
	Local       bool // runs on this machine (no API key, no network)
	Models      []string
}

var catalog = []CatalogFamily{
	{Name: FamilyAnthropic, DisplayName: "Anthropic", Models: []string{
		"claude-sonnet-4-20250514", "claude-opus-4-20250514", "claude-3-7-sonnet-20250219", "claude-3-5-haiku-20241022"}},
	{Name: FamilyEcho, DisplayName: "Echo (offline demo)", Local: true, Models: []string{"echo"}},
	{Name: FamilyOllama, DisplayName: "Ollama", Local: true, Models: []string{"llama3.2", "qwen3:4b", "mistral"}},
	{Name: FamilyOpenAI, DisplayName: "OpenAI", Models: []string{
		"gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini"}},
}

// Catalog returns the provider families, sorted by name.
func Catalog() []api.CatalogModelProvider {
	out := make([]api.CatalogModelProvider, len(catalog))
	for i, f := range catalog {
		out[i] = api.CatalogModelProvider{Name: f.Name, DisplayName: f.DisplayName, Local: f.Local}
	}
	return out
}

// CatalogModels returns the built-in models of family, the default first (nil for an unknown family).
func CatalogModels(family string) []string {
	for _, f := range catalog {
		if f.Name == family {
			return slices.Clone(f.Models)
		}
	}
	return nil
}

// CatalogModelsFor answers config/catalog-models for provider, a family or a configured "<family>.<alias>":
// the family's built-in models, then the other models configured for it in cfg (sorted), priced from
// cost.prices where a price is set. An unknown family or reference is ErrInvalidValue.
func CatalogModelsFor(cfg *Config, provider string) (api.CatalogModelsResult, error) {
	family, alias, isRef := strings.Cut(provider, ".")
	i := slices.IndexFunc(catalog, func(f CatalogFamily) bool { return f.Name == family })
	if i < 0 {
		return api.CatalogModelsResult{}, fmt.Errorf("%w: unknown model provider %q (families: %s)", ErrInvalidValue, provider, strings.Join(Families, ", "))
	}
	if _, ok := cfg.Providers.Models[family][alias]; isRef && !ok {
		return api.CatalogModelsResult{}, fmt.Errorf("%w: model provider %q is not configured under providers.models", ErrInvalidValue, provider)
	}
	models := slices.Clone(catalog[i].Models)
	var extra []string
	for _, a := range sortedKeys(cfg.Providers.Models[family]) {
		if m := cfg.Providers.Models[family][a].Model; m != "" && !slices.Contains(models, m) && !slices.Contains(extra, m) {
			extra = append(extra, m)
		}
	}
	slices.Sort(extra)
	models = append(models, extra...)
	res := api.CatalogModelsResult{ModelProvider: provider, Models: models, Local: catalog[i].Local}
	for _, m := range models {
		if p, ok := cfg.Cost.PriceOf(m); ok {
			if res.Pricing == nil {
				res.Pricing = map[string]api.ModelPricing{}
			}
			res.Pricing[m] = api.ModelPricing{Input: p.InputPerMillion, Output: p.OutputPerMillion}
		}
	}
	return res, nil
}
