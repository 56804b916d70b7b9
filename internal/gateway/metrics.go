package gateway

import (
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
)

// Metrics is what GET /metrics serves: the gateway's own connections and requests, what the daemon's events
// tell about turns, provider errors, tokens and cost, the chat channels' state, and the Go runtime's and the
// process's (the go_* and process_* families Prometheus' Go client exposes, under the same names).
type Metrics struct {
	open        value
	accepted    value
	refusedCap  value
	requests    *vec
	turns       *vec
	turnSeconds *histogramVec
	provErrors  value
	tokens      *vec
	costUSD     value

	mu        sync.Mutex // guards channels, heartbeat
	channels  []func() []api.ChannelStatus
	heartbeat func() HeartbeatSample
}

// NewMetrics returns metrics all at zero.
func NewMetrics() *Metrics {
	return &Metrics{
		requests:    newVec("code", "method", "route"),
		turns:       newVec("outcome"),
		turnSeconds: newHistogramVec("outcome", 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
		tokens:      newVec("direction"),
	}
}

// AppendText appends one scrape in the Prometheus text format 0.0.4.
func (m *Metrics) AppendText(b []byte) []byte {
	fams := []family{
		{name: "zeroclaw_gateway_open_connections", typ: "gauge", help: "HTTP connections open on the gateway.",
			samples: []sample{{value: m.open.get()}}},
		{name: "zeroclaw_gateway_connections_total", typ: "counter", help: "HTTP connections the gateway accepted.",
			samples: []sample{{value: m.accepted.get()}}},
		{name: "zeroclaw_gateway_connections_refused_total", typ: "counter", help: "TCP connections answered 503 and closed at accept because max_connections were open.",
			samples: []sample{{value: m.refusedCap.get()}}},
		m.requests.family("zeroclaw_gateway_requests_total", "Gateway requests by route pattern, method and status code.", "counter"),
		m.turns.family("zeroclaw_turns_total", "Agent turns ended, by outcome (completed, failed, cancelled).", "counter"),
		m.turnSeconds.family("zeroclaw_turn_duration_seconds", "Wall time of agent turns, by outcome."),
		{name: "zeroclaw_provider_errors_total", typ: "counter", help: "Turns that failed because the model provider's request failed.",
			samples: []sample{{value: m.provErrors.get()}}},
		m.tokens.family("zeroclaw_tokens_total", "Model tokens used, by direction (input, output).", "counter"),
		{name: "zeroclaw_cost_usd_total", typ: "counter", help: "Cost of model requests in USD, as priced when recorded.",
			samples: []sample{{value: m.costUSD.get()}}},
	}
	fams = append(fams, m.channelFamilies()...)
	fams = append(fams, m.heartbeatFamilies()...)
	fams = append(fams, runtimeFamilies()...)
	fams = append(fams, processFamilies()...)
	return appendExposition(b, fams)
}

// contentType is the text format's, as client_golang's handler named it (metric names are never escaped:
// every name here is a legacy Prometheus name).
const contentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

func (m *Metrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b := m.AppendText(make([]byte, 0, 16<<10))
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
}

// metrics is GET /metrics: open, as upstream's, unless gateway.metrics_require_token, which asks for a paired
// token (401 without one, and failed tokens count towards the auth lockout as on every route).
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	if s.o.Daemon.Config().Gateway.MetricsRequireToken {
		if _, err := s.authenticate(r); err != nil {
			return err
		}
	}
	s.o.Metrics.handler().ServeHTTP(w, r)
	return nil
}

// connState counts connections (http.Server.ConnState).
func (m *Metrics) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		m.accepted.add(1)
		m.open.add(1)
	case http.StateClosed, http.StateHijacked:
		m.open.add(-1)
	}
}

// refused counts a connection closed at accept past the cap.
func (m *Metrics) refused() { m.refusedCap.add(1) }

// request counts one answered request.
func (m *Metrics) request(route, method string, code int) {
	m.requests.with(strconv.Itoa(code), method, route).add(1)
}

// Observe takes a runtime event: an ended turn is counted and timed; a provider failure counted. It never
// blocks (logs.Publisher).
func (m *Metrics) Observe(e logs.Entry) {
	if e.Category != logs.CategoryAgent {
		return
	}
	var outcome string
	switch e.Action {
	case "complete":
		outcome = "completed"
	case "fail":
		outcome = "failed"
		if e.Attributes["error_kind"] == "provider" {
			m.provErrors.add(1)
		}
	case "cancel":
		outcome = "cancelled"
	default:
		return
	}
	m.turns.with(outcome).add(1)
	if ms, ok := e.Zeroclaw["duration_ms"].(int64); ok {
		m.turnSeconds.observe(outcome, float64(ms)/1000)
	}
}

// Recorded takes one priced provider request (cost.Options.Recorded).
func (m *Metrics) Recorded(_ string, in, out int64, usd float64) {
	m.tokens.with("input").add(float64(in))
	m.tokens.with("output").add(float64(out))
	if usd > 0 {
		m.costUSD.add(usd)
	}
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
