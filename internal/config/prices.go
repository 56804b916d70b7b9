package config

import "strings"

// builtinPrices are list prices in USD per million tokens of common hosted models (OpenAI's and Anthropic's
// public price pages), so the default budget of [cost] counts real spending before anyone writes cost.prices.
// A cost.prices entry for the same model overrides one; a dated release (gpt-4o-2024-08-06,
// claude-sonnet-4-5-20250929) takes the price of its longest listed prefix.
var builtinPrices = map[string]ModelCost{
	// OpenAI
	"gpt-4o":       {InputPerMillion: 2.50, OutputPerMillion: 10.00, CachedInputPerMillion: 1.25},
	"gpt-4o-mini":  {InputPerMillion: 0.15, OutputPerMillion: 0.60, CachedInputPerMillion: 0.075},
	"gpt-4.1":      {InputPerMillion: 2.00, OutputPerMillion: 8.00, CachedInputPerMillion: 0.50},
	"gpt-4.1-mini": {InputPerMillion: 0.40, OutputPerMillion: 1.60, CachedInputPerMillion: 0.10},
	"gpt-4.1-nano": {InputPerMillion: 0.10, OutputPerMillion: 0.40, CachedInputPerMillion: 0.025},
	"o1":           {InputPerMillion: 15.00, OutputPerMillion: 60.00, CachedInputPerMillion: 7.50},
	"o1-mini":      {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.55},
	"o3":           {InputPerMillion: 2.00, OutputPerMillion: 8.00, CachedInputPerMillion: 0.50},
	"o3-mini":      {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.55},
	"o3-pro":       {InputPerMillion: 20.00, OutputPerMillion: 80.00},
	"o4-mini":      {InputPerMillion: 1.10, OutputPerMillion: 4.40, CachedInputPerMillion: 0.275},
	// Anthropic (cached: the cache-read price)
	"claude-opus-4":     {InputPerMillion: 15.00, OutputPerMillion: 75.00, CachedInputPerMillion: 1.50},
	"claude-opus-4-1":   {InputPerMillion: 15.00, OutputPerMillion: 75.00, CachedInputPerMillion: 1.50},
	"claude-opus-4-5":   {InputPerMillion: 5.00, OutputPerMillion: 25.00, CachedInputPerMillion: 0.50},
	"claude-sonnet-4":   {InputPerMillion: 3.00, OutputPerMillion: 15.00, CachedInputPerMillion: 0.30},
	"claude-3-7-sonnet": {InputPerMillion: 3.00, OutputPerMillion: 15.00, CachedInputPerMillion: 0.30},
	"claude-3-5-sonnet": {InputPerMillion: 3.00, OutputPerMillion: 15.00, CachedInputPerMillion: 0.30},
	"claude-haiku-4-5":  {InputPerMillion: 1.00, OutputPerMillion: 5.00, CachedInputPerMillion: 0.10},
	"claude-3-5-haiku":  {InputPerMillion: 0.80, OutputPerMillion: 4.00, CachedInputPerMillion: 0.08},
	"claude-3-haiku":    {InputPerMillion: 0.25, OutputPerMillion: 1.25, CachedInputPerMillion: 0.03},
}

// PriceOf returns the price of model: its cost.prices entry, else the built-in list price of the model or of
// its longest listed prefix (a "vendor/" in front, as routers name models, is ignored there); ok is false for
// a model with neither.
func (c CostConfig) PriceOf(model string) (ModelCost, bool) {
	if p, ok := c.Prices[model]; ok {
		return p, true
	}
	name := strings.ToLower(model[strings.LastIndexByte(model, '/')+1:])
	best := ""
	for k := range builtinPrices {
		if len(k) > len(best) && (name == k || strings.HasPrefix(name, k+"-") || strings.HasPrefix(name, k+"@")) {
			best = k
		}
	}
	if best == "" {
		return ModelCost{}, false
	}
	return builtinPrices[best], true
}
