package config

import "testing"

// PriceFor reads upstream v3's per-provider pricing (split, flat, a dated release by its prefix) before
// cost.prices, and falls back to cost.prices and the built-in list for a model the provider does not price.
func TestPriceForProviderPricing(t *testing.T) {
	raw := string(DefaultTOML()) + `
[providers.models.openai.main]
model = "gpt-4o"
pricing = { "gpt-4o.input" = 5.0, "gpt-4o.output" = 15.0, "mini" = 0.5 }

[cost.prices.gpt-4o]
input = 99.0
output = 99.0
`
	cfg, _, err := LoadBytes("config.toml", []byte(raw), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref, model string
		in, out    float64
	}{
		{"openai.main", "gpt-4o", 5, 15},
		{"openai.main", "gpt-4o-2024-08-06", 5, 15},
		{"openai.main", "mini", 0.5, 0.5},
		{"", "gpt-4o", 99, 99},               // no provider: cost.prices
		{"openai.other", "gpt-4o", 99, 99},   // another provider: cost.prices
		{"openai.main", "gpt-4.1", 2.0, 8.0}, // not priced by the provider: the built-in list
	} {
		p, ok := cfg.PriceFor(c.ref, c.model)
		if !ok || p.InputPerMillion != c.in || p.OutputPerMillion != c.out {
			t.Errorf("PriceFor(%q, %q) = %+v %v, want %v/%v", c.ref, c.model, p, ok, c.in, c.out)
		}
	}
}
