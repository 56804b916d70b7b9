package config

import "strings"

// PriceFor returns the price of model as served by the provider ref ("<family>.<alias>"): that provider's
// pricing (upstream v3's form, read beside ours), else cost.prices or the built-in list (CostConfig.PriceOf).
func (c *Config) PriceFor(ref, model string) (ModelCost, bool) {
	if family, alias, ok := strings.Cut(ref, "."); ok {
		if p, ok := c.Providers.Models[family][alias].priceOf(model); ok {
			return p, true
		}
	}
	return c.Cost.PriceOf(model)
}

// priceOf reads pricing for model: "<key>.input" and "<key>.output" (a side not given costs 0), or "<key>" for
// both, where key is model itself or, for a dated release such as gpt-4o-2024-08-06, its longest priced
// prefix. Cached input is charged at the input rate, as upstream's per-provider pricing has no cached rate.
func (p ProviderConfig) priceOf(model string) (ModelCost, bool) {
	if len(p.Pricing) == 0 || model == "" {
		return ModelCost{}, false
	}
	best, found := "", false
	for k := range p.Pricing {
		name := strings.TrimSuffix(strings.TrimSuffix(k, ".input"), ".output")
		if (name == model || strings.HasPrefix(model, name+"-") || strings.HasPrefix(model, name+"@")) && (!found || len(name) > len(best)) {
			best, found = name, true
		}
	}
	if !found {
		return ModelCost{}, false
	}
	in, hasIn := p.Pricing[best+".input"]
	out, hasOut := p.Pricing[best+".output"]
	if flat, ok := p.Pricing[best]; ok {
		if !hasIn {
			in = flat
		}
		if !hasOut {
			out = flat
		}
	}
	return ModelCost{InputPerMillion: in, OutputPerMillion: out}, true
}
