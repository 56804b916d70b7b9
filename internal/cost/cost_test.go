package cost

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

func TestPrice(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Cost.Prices = map[string]config.ModelCost{
		"m": {InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: 0.3},
		"n": {InputPerMillion: 2, OutputPerMillion: -1},
		// A configured price overrides the built-in one.
		"gpt-4.1": {InputPerMillion: 1, OutputPerMillion: 1},
	}
	for _, c := range []struct {
		u      Usage
		want   float64
		priced bool
	}{
		{Usage{Model: "m", InputTokens: 1_000_000, OutputTokens: 1_000_000}, 18, true},
		{Usage{Model: "m", InputTokens: 1_000_000, CachedInputTokens: 500_000}, 1.5 + 0.15, true},
		{Usage{Model: "n", InputTokens: 1_000_000, CachedInputTokens: 500_000, OutputTokens: 9}, 2, true}, // cached at the input rate; negative rate is 0
		{Usage{Model: "x", InputTokens: 5}, 0, false},
		// Built-in list prices: exact, a dated release by its longest prefix, a router's vendor/ prefix.
		{Usage{Model: "gpt-4o", InputTokens: 1_000_000, OutputTokens: 1_000_000}, 12.5, true},
		{Usage{Model: "gpt-4o-mini-2024-07-18", InputTokens: 1_000_000}, 0.15, true},
		{Usage{Model: "openai/gpt-4o-mini", OutputTokens: 1_000_000}, 0.6, true},
		{Usage{Model: "claude-sonnet-4-5-20250929", InputTokens: 1_000_000, OutputTokens: 1_000_000}, 18, true},
		{Usage{Model: "claude-opus-4-5", OutputTokens: 1_000_000}, 25, true},
		{Usage{Model: "claude-haiku-4-5", InputTokens: 1_000_000, CachedInputTokens: 1_000_000}, 0.1, true},
		{Usage{Model: "gpt-4.1", InputTokens: 1_000_000}, 1, true},
		{Usage{Model: "gpt-4.1-mini", InputTokens: 1_000_000}, 0.4, true},
		{Usage{Model: "gpt-4ox", InputTokens: 1_000_000}, 0, false},
		{Usage{Model: "echo", InputTokens: 1_000_000}, 0, false},
	} {
		got, priced := Price(cfg, c.u)
		if math.Abs(got-c.want) > 1e-12 || priced != c.priced {
			t.Errorf("Price(%+v) = %v, %v; want %v, %v", c.u, got, priced, c.want, c.priced)
		}
	}
}

// The ledger line is state.md §7's record: an unpriced model writes pricing_available:false and cost 0, a
// priced one omits it; cached tokens are omitted when 0; day totals roll over at UTC midnight.
func TestRecordShapeAndRollover(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "costs.jsonl")
	ledger := store.OpenCostLedger(path)
	defer ledger.Close()
	cfg := config.Default()
	cfg.Cost.DailyLimitUSD, cfg.Cost.MonthlyLimitUSD = 1, 0
	cfg.Cost.Prices = map[string]config.ModelCost{"m": {InputPerMillion: 1e6}}
	clk := clocktest.New(time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC))
	n := 0
	tr := NewTracker(Options{Ledger: ledger, Config: func() *config.Config { return cfg }, Clock: clk,
		NewID: func() string { n++; return "r" + string(rune('0'+n)) }})
	ctx := context.Background()
	if err := tr.Record(ctx, "s", "a", Usage{Model: "x", InputTokens: 3, OutputTokens: 4}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Record(ctx, "s", "", Usage{Model: "m", InputTokens: 2}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	want0 := `{"id":"r1","usage":{"model":"x","input_tokens":3,"output_tokens":4,"total_tokens":7,"cost_usd":0,"pricing_available":false,"timestamp":"2026-03-01T23:00:00Z"},"session_id":"s","agent_alias":"a"}`
	want1 := `{"id":"r2","usage":{"model":"m","input_tokens":2,"output_tokens":0,"total_tokens":2,"cost_usd":2,"timestamp":"2026-03-01T23:00:00Z"},"session_id":"s"}`
	if len(lines) != 2 || lines[0] != want0 || lines[1] != want1 {
		t.Fatalf("ledger\n%s\nwant\n%s\n%s", raw, want0, want1)
	}
	if _, err := tr.Check("a"); err == nil || !strings.Contains(err.Error(), "$2.0000 of $1.00 Day limit") {
		t.Fatalf("over the daily limit: %v", err)
	}
	clk.Advance(time.Hour) // a new UTC day
	if w, err := tr.Check("a"); err != nil || w != "" {
		t.Fatalf("next day: %q %v", w, err)
	}
	// A tracker started later (a restart) seeds today's totals from the ledger.
	cfg.Cost.DailyLimitUSD = 0
	cfg.Cost.MonthlyLimitUSD = 1.5
	tr2 := NewTracker(Options{Ledger: ledger, Config: func() *config.Config { return cfg }, Clock: clk})
	if _, err := tr2.Check("a"); err == nil || !strings.Contains(err.Error(), "Month limit") {
		t.Fatalf("monthly after restart: %v", err)
	}
	cfg.Cost.Enabled = false
	if _, err := tr2.Check("a"); err != nil {
		t.Fatalf("disabled: %v", err)
	}
}

// The default budget counts a built-in priced model with no cost.prices at all; the summary names the models
// recorded without a price and fills the per-day input and output tokens.
func TestBuiltinPricesCountAndUnpricedNamed(t *testing.T) {
	t.Parallel()
	ledger := store.OpenCostLedger(filepath.Join(t.TempDir(), "costs.jsonl"))
	defer ledger.Close()
	cfg := config.Default() // daily limit $10, no prices
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	tr := NewTracker(Options{Ledger: ledger, Config: func() *config.Config { return cfg }, Clock: clk})
	ctx := context.Background()
	if err := tr.Record(ctx, "s", "a", Usage{Model: "gpt-4o", InputTokens: 2_000_000, OutputTokens: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"local-llama", "echo", "local-llama"} {
		if err := tr.Record(ctx, "s", "a", Usage{Model: m, InputTokens: 10, OutputTokens: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tr.Check("a"); err == nil || !strings.Contains(err.Error(), "$15.0000 of $10.00 Day limit") {
		t.Fatalf("the default budget does not count gpt-4o: %v", err)
	}
	s, err := tr.Query("", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	d := s.ByDay["2026-03-01"]
	if d == nil || d.InputTokens != 2_000_030 || d.OutputTokens != 1_000_015 || math.Abs(d.CostUSD-15) > 1e-9 {
		t.Fatalf("by_day %+v", d)
	}
	if strings.Join(s.UnpricedModels, ",") != "echo,local-llama" {
		t.Fatalf("unpriced models %q", s.UnpricedModels)
	}
}
