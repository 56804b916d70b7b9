package gateway_test

import (
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// Every metric the gateway issue names moves: connections, requests by route, method and code, the turn latency
// histogram, provider errors, tokens and cost. One turn through a fake OpenAI backend that reports usage and is
// priced, one turn the backend refuses, and gateway requests with three codes; /metrics is read by the
// Prometheus text parser before and after.
func TestGatewayMetricsMove(t *testing.T) {
	t.Parallel()
	model1 := newLLM(t,
		stream(ctSSE, openAIText(1000, 500, "priced")),
		func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"bad request","type":"invalid_request_error"}}`))
		})
	extra := "\n[cost]\nenabled = true\n\n[cost.prices.m-1]\ninput = 2.0\noutput = 4.0\n"
	d, g, code := rpctest.StartGateway(t, agentConfig(fakeProviderTOML("openai", model1.URL), "openai.fake", "full", extra))

	scrape := func(g *rpctest.Gateway) map[string]float64 {
		t.Helper()
		r := g.Do("GET", "/metrics", nil).Want(t, 200)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(string(r.Raw)))
		if err != nil {
			t.Fatalf("/metrics does not parse: %v\n%s", err, r.Raw)
		}
		out := map[string]float64{}
		for name, f := range fams {
			if !strings.HasPrefix(name, "zeroclaw_") {
				continue
			}
			for _, m := range f.GetMetric() {
				key := name
				for _, lp := range m.GetLabel() {
					key += " " + lp.GetName() + "=" + lp.GetValue()
				}
				switch {
				case m.GetCounter() != nil:
					out[key] = m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					out[key] = m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					out[key+" count"] = float64(m.GetHistogram().GetSampleCount())
					out[key+" sum"] = m.GetHistogram().GetSampleSum()
				}
			}
		}
		return out
	}
	before := scrape(g)

	auth := rpctest.PairOnce(t, g, code)
	g.Do("GET", "/api/status", nil, auth).Want(t, 200)
	g.Do("DELETE", "/api/cron/nope", nil, auth).Want(t, 404)
	g.Do("GET", "/api/status", nil).Want(t, 401)

	c := dialRC(t, d, "")
	sid := c.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID
	if tr := c.prompt(sid, "one", hooks{}); tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn 1: %+v", tr.result)
	}
	if tr := c.prompt(sid, "two", hooks{}); tr.result.Outcome != api.OutcomeFailed {
		t.Fatalf("turn 2 (refused by the backend): %+v", tr.result)
	}

	// A second client opens a connection of its own.
	after := scrape(rpctest.NewGateway(t, d.GatewayURL(t)))
	moved := func(key string, want float64) {
		t.Helper()
		if got := after[key] - before[key]; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s moved by %v, want %v", key, got, want)
		}
	}
	moved("zeroclaw_gateway_requests_total code=200 method=GET route=/api/status", 1)
	moved("zeroclaw_gateway_requests_total code=401 method=GET route=/api/status", 1)
	moved("zeroclaw_gateway_requests_total code=404 method=DELETE route=/api/cron/{id}", 1)
	moved("zeroclaw_gateway_requests_total code=200 method=POST route=/pair", 1)
	moved("zeroclaw_turns_total outcome=completed", 1)
	moved("zeroclaw_turns_total outcome=failed", 1)
	moved("zeroclaw_turn_duration_seconds outcome=completed count", 1)
	moved("zeroclaw_turn_duration_seconds outcome=failed count", 1)
	moved("zeroclaw_provider_errors_total", 1)
	moved("zeroclaw_tokens_total direction=input", 1000)
	moved("zeroclaw_tokens_total direction=output", 500)
	moved("zeroclaw_cost_usd_total", 1000*2.0/1e6+500*4.0/1e6)
	if d := after["zeroclaw_gateway_connections_total"] - before["zeroclaw_gateway_connections_total"]; d < 1 {
		t.Errorf("connections_total moved by %v, want at least 1 (a second client connected)", d)
	}
	if after["zeroclaw_gateway_open_connections"] < 1 {
		t.Errorf("open_connections %v while a scrape is in flight", after["zeroclaw_gateway_open_connections"])
	}
	if t.Failed() {
		t.Logf("after: %v", after)
	}
}
