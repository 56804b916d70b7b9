package rpctest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
)

// Budgets with a fake OpenAI backend reporting usage: each request costs $6 (1M input tokens at $6/M). The
// second turn sees the warning threshold (a notice and a log event), the third is refused before it reaches
// the provider; after a rate change and a higher limit the next request is priced at the new rate while the
// old records keep theirs, also after a restart.
func TestCostBudgetsOverSocket(t *testing.T) {
	t.Parallel()
	srv := newLLM(t, stream(ctSSE, openAIText(1_000_000, 0, "ok")))
	extra := "\n[cost]\nenabled = true\ndaily_limit_usd = 10.0\nmonthly_limit_usd = 100.0\nwarn_at_percent = 50\n\n[cost.prices.m-1]\ninput = 6.0\noutput = 0.0\n\n[observability]\nlog_persistence = \"full\"\n"
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", extra)))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})

	if tr := c.prompt(s.SessionID, "one", hooks{}); tr.result.Outcome != api.OutcomeCompleted || len(only(tr.events, api.UpdateNotice)) != 0 {
		t.Fatalf("turn 1: %+v %v", tr.result, kinds(tr.events))
	}
	tr := c.prompt(s.SessionID, "two", hooks{})
	notices := only(tr.events, api.UpdateNotice)
	if tr.result.Outcome != api.OutcomeCompleted || len(notices) != 1 || notices[0].Level != "warn" ||
		!strings.Contains(notices[0].Text, "$6.0000 of $10.00 Day limit") {
		t.Fatalf("turn 2: %+v %+v", tr.result, notices)
	}
	tr = c.prompt(s.SessionID, "three", hooks{})
	last := tr.events[len(tr.events)-1]
	want := "Budget exceeded: $12.0000 of $10.00 Day limit. Cannot make further API calls until the budget resets."
	if tr.result.Outcome != api.OutcomeFailed || last.Type != api.UpdateTurnComplete || last.Error != want {
		t.Fatalf("turn 3: %+v, last event %+v", tr.result, last)
	}
	if _, bodies := srv.requests(); len(bodies) != 2 {
		t.Fatalf("the provider saw %d requests, want 2 (the third was refused)", len(bodies))
	}
	var page api.LogsQueryResult
	c.mustCall(api.MethodLogsQuery, map[string]any{"q": "budget", "severity_min": 13}, &page)
	var actions []string
	for _, raw := range page.Events {
		var e logEvent
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		actions = append(actions, e.Event.Action)
	}
	// Newest first: the failed turn, the refused call, the warning (once, though two turns saw it).
	if fmt.Sprint(actions) != "[fail skip note]" {
		t.Fatalf("budget log events %v: %s", actions, page.Events)
	}

	// A new rate and a higher limit: only later requests use the rate.
	c.mustCall(api.MethodConfigSetMany, map[string]any{"sets": []map[string]any{
		{"prop": "cost.prices.m-1.input", "value": 1.0}, {"prop": "cost.daily_limit_usd", "value": 50.0}}}, nil)
	if tr := c.prompt(s.SessionID, "four", hooks{}); tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn 4: %+v %v", tr.result, kinds(tr.events))
	}
	check := func(d *Daemon) {
		t.Helper()
		var got []float64
		for _, r := range costLines(t, d) {
			got = append(got, r.Usage.CostUSD)
			if r.Usage.Model != "m-1" || r.Usage.PricingAvailable != nil || r.AgentAlias != "a" {
				t.Fatalf("record %+v", r)
			}
		}
		if fmt.Sprint(got) != "[6 6 1]" {
			t.Fatalf("ledger costs %v, want [6 6 1]", got)
		}
		c := dialRC(t, d, "")
		var sum cost.Summary
		c.mustCall(api.MethodCostQuery, map[string]any{}, &sum)
		if math.Abs(sum.DailyCostUSD-13) > 1e-9 || math.Abs(sum.MonthlyCostUSD-13) > 1e-9 || sum.RequestCount != 3 ||
			sum.ByModel["m-1"] == nil || sum.ByModel["m-1"].RequestCount != 3 || sum.ByAgent["a"] == nil || math.Abs(sum.ByAgent["a"].CostUSD-13) > 1e-9 {
			t.Fatalf("cost/query %+v", sum)
		}
		var byAgent cost.Summary
		c.mustCall(api.MethodCostQuery, map[string]any{"agent": "nobody"}, &byAgent)
		if byAgent.RequestCount != 0 {
			t.Fatalf("agent filter: %+v", byAgent)
		}
		if _, werr := c.call(api.MethodCostQuery, map[string]any{"from": "yesterday"}); werr == nil || werr.Code != -32602 || !strings.Contains(werr.Message, `invalid date "yesterday"`) {
			t.Fatalf("bad from: %v", werr)
		}
		res, werr := c.call(api.MethodCostOrg, map[string]any{})
		if werr != nil || string(res) != "null" {
			t.Fatalf("cost/org: %s %v", res, werr)
		}
	}
	check(d)
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d2 := StartOn(t, d.ConfigDir)
	check(d2)
	// After the restart the totals come back from the ledger: $13 of $50, so a fifth request still runs.
	c2 := dialRC(t, d2, "")
	s2 := c2.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := c2.prompt(s2.SessionID, "five", hooks{}); tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn 5: %+v", tr.result)
	}
	c2.mustCall(api.MethodConfigSet, map[string]any{"prop": "cost.daily_limit_usd", "value": 13.5}, nil)
	if tr := c2.prompt(s2.SessionID, "six", hooks{}); tr.result.Outcome != api.OutcomeFailed || !strings.Contains(tr.events[len(tr.events)-1].Error, "$14.0000 of $13.50 Day limit") {
		t.Fatalf("turn 6 after restart: %+v %+v", tr.result, tr.events[len(tr.events)-1])
	}
}
