package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// costSummary is the part of cost/query's result the costs command prints.
type costSummary struct {
	SessionCostUSD float64            `json:"session_cost_usd"`
	DailyCostUSD   float64            `json:"daily_cost_usd"`
	MonthlyCostUSD float64            `json:"monthly_cost_usd"`
	TotalTokens    int64              `json:"total_tokens"`
	RequestCount   int                `json:"request_count"`
	ByModel        map[string]costRow `json:"by_model"`
	ByAgent        map[string]costRow `json:"by_agent"`
	ByDay          map[string]costRow `json:"by_day"`
	UnpricedModels []string           `json:"unpriced_models"`
}

type costRow struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	RequestCount int     `json:"request_count"`
}

func runCosts(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "costs", "[--config-dir DIR] [--by day|agent|model] [--agent ALIAS] [--from TIME] [--to TIME] [--json]")
	configDir := configDirFlag(fs)
	by := fs.String("by", "day", "group the table by day, agent or model")
	agent := fs.String("agent", "", "only this agent's requests")
	from := fs.String("from", "", "only requests at or after this RFC 3339 time")
	to := fs.String("to", "", "only requests before this RFC 3339 time")
	asJSON := fs.Bool("json", false, "print the raw cost/query result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *by != "day" && *by != "agent" && *by != "model" {
		return hint.With(say("cli-costs-bad-by", "value", fmt.Sprintf("%q", *by)), "zeroclaw costs --by model")
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	params := api.CostQueryParams{Agent: *agent, From: *from, To: *to}
	var raw json.RawMessage
	c, err := connect(ctx, layout.Endpoint(env.Getenv), nil)
	switch {
	case errors.Is(err, errNoDaemon):
		if raw, err = offlineCosts(layout, env, params); err != nil {
			return err
		}
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-offline-note"))
	case err != nil:
		return err
	default:
		defer c.Close()
		if err := c.Call(ctx, api.MethodCostQuery, params, &raw); err != nil {
			return callError("costs", err, nil)
		}
	}
	if *asJSON {
		fmt.Fprintln(env.Stdout, string(raw))
		return nil
	}
	var s costSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("cost/query: unexpected result: %w", err)
	}
	rows := map[string]map[string]costRow{"day": s.ByDay, "agent": s.ByAgent, "model": s.ByModel}[*by]
	w := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%s\tREQUESTS\tINPUT\tOUTPUT\tTOTAL TOKENS\tCOST USD\t\n", map[string]string{"day": "DAY (UTC)", "agent": "AGENT", "model": "MODEL"}[*by])
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range rows {
			if !yield(k) {
				return
			}
		}
	})
	var total float64
	for _, k := range keys {
		r := rows[k]
		total += r.CostUSD
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%.4f\t\n", visible.Escape(k), r.RequestCount, r.InputTokens, r.OutputTokens, r.TotalTokens, r.CostUSD)
	}
	fmt.Fprintf(w, "TOTAL\t%d\t\t\t%d\t%.4f\t\n", s.RequestCount, s.TotalTokens, total)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-costs-summary", "today", fmt.Sprintf("%.4f", s.DailyCostUSD), "month", fmt.Sprintf("%.4f", s.MonthlyCostUSD),
		"run", fmt.Sprintf("%.4f", s.SessionCostUSD)))
	if len(s.UnpricedModels) > 0 {
		quoted := make([]string, len(s.UnpricedModels))
		for i, m := range s.UnpricedModels {
			quoted[i] = visible.Escape(m)
		}
		loc := env.Locale()
		fmt.Fprintln(env.Stdout, loc.T("cli-costs-unpriced", "models", strings.Join(quoted, ", ")))
		fmt.Fprintln(env.Stdout, "  "+loc.T("cli-costs-price-one", "command",
			`zeroclaw config set 'cost.prices."`+visible.Escape(s.UnpricedModels[0])+`"' '{"input": 2.5, "output": 10}'`))
	}
	return nil
}
