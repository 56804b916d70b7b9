package gateway

import (
	"net"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zeroclaw-go/zeroclaw/internal/logs"
)

// Metrics is the registry GET /metrics serves: the gateway's own connections and requests, and what the
// daemon's events tell about turns, provider errors, tokens and cost.
type Metrics struct {
	reg         *prometheus.Registry
	open        prometheus.Gauge
	accepted    prometheus.Counter
	refusedCap  prometheus.Counter
	requests    *prometheus.CounterVec
	turns       *prometheus.CounterVec
	turnSeconds *prometheus.HistogramVec
	provErrors  prometheus.Counter
	tokens      *prometheus.CounterVec
	costUSD     prometheus.Counter
}

// NewMetrics builds a registry with every metric at zero.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		open: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zeroclaw_gateway_open_connections",
			Help: "HTTP connections open on the gateway."}),
		accepted: prometheus.NewCounter(prometheus.CounterOpts{Name: "zeroclaw_gateway_connections_total",
			Help: "HTTP connections the gateway accepted."}),
		refusedCap: prometheus.NewCounter(prometheus.CounterOpts{Name: "zeroclaw_gateway_connections_refused_total",
			Help: "TCP connections answered 503 and closed at accept because max_connections were open."}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_gateway_requests_total",
			Help: "Gateway requests by route pattern, method and status code."}, []string{"route", "method", "code"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_turns_total",
			Help: "Agent turns ended, by outcome (completed, failed, cancelled)."}, []string{"outcome"}),
		turnSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "zeroclaw_turn_duration_seconds",
			Help: "Wall time of agent turns, by outcome.", Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}},
			[]string{"outcome"}),
		provErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "zeroclaw_provider_errors_total",
			Help: "Turns that failed because the model provider's request failed."}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_tokens_total",
			Help: "Model tokens used, by direction (input, output)."}, []string{"direction"}),
		costUSD: prometheus.NewCounter(prometheus.CounterOpts{Name: "zeroclaw_cost_usd_total",
			Help: "Cost of model requests in USD, as priced when recorded."}),
	}
	m.reg.MustRegister(m.open, m.accepted, m.refusedCap, m.requests, m.turns, m.turnSeconds, m.provErrors, m.tokens, m.costUSD,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Registry is the underlying registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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
		m.accepted.Inc()
		m.open.Inc()
	case http.StateClosed, http.StateHijacked:
		m.open.Dec()
	}
}

// refused counts a connection closed at accept past the cap.
func (m *Metrics) refused() { m.refusedCap.Inc() }

// request counts one answered request.
func (m *Metrics) request(route, method string, code int) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
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
			m.provErrors.Inc()
		}
	case "cancel":
		outcome = "cancelled"
	default:
		return
	}
	m.turns.WithLabelValues(outcome).Inc()
	if ms, ok := e.Zeroclaw["duration_ms"].(int64); ok {
		m.turnSeconds.WithLabelValues(outcome).Observe(float64(ms) / 1000)
	}
}

// Recorded takes one priced provider request (cost.Options.Recorded).
func (m *Metrics) Recorded(_ string, in, out int64, usd float64) {
	m.tokens.WithLabelValues("input").Add(float64(in))
	m.tokens.WithLabelValues("output").Add(float64(out))
	if usd > 0 {
		m.costUSD.Add(usd)
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
