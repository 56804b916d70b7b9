package gateway

import (
	"bytes"
	"math"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
)

// pinnedFamilies is every family GET /metrics served on Linux when the exposition was client_golang's registry
// with its Go and process collectors (main at 4e89217): name, type and label names. Dashboards and alerts are
// written against these; a family that disappears, changes type or gains/loses a label breaks them.
var pinnedFamilies = []string{
	"go_gc_duration_seconds summary",
	"go_gc_gogc_percent gauge",
	"go_gc_gomemlimit_bytes gauge",
	"go_goroutines gauge",
	"go_info gauge version",
	"go_memstats_alloc_bytes gauge",
	"go_memstats_alloc_bytes_total counter",
	"go_memstats_buck_hash_sys_bytes gauge",
	"go_memstats_frees_total counter",
	"go_memstats_gc_sys_bytes gauge",
	"go_memstats_heap_alloc_bytes gauge",
	"go_memstats_heap_idle_bytes gauge",
	"go_memstats_heap_inuse_bytes gauge",
	"go_memstats_heap_objects gauge",
	"go_memstats_heap_released_bytes gauge",
	"go_memstats_heap_sys_bytes gauge",
	"go_memstats_last_gc_time_seconds gauge",
	"go_memstats_mallocs_total counter",
	"go_memstats_mcache_inuse_bytes gauge",
	"go_memstats_mcache_sys_bytes gauge",
	"go_memstats_mspan_inuse_bytes gauge",
	"go_memstats_mspan_sys_bytes gauge",
	"go_memstats_next_gc_bytes gauge",
	"go_memstats_other_sys_bytes gauge",
	"go_memstats_stack_inuse_bytes gauge",
	"go_memstats_stack_sys_bytes gauge",
	"go_memstats_sys_bytes gauge",
	"go_sched_gomaxprocs_threads gauge",
	"go_threads gauge",
	"process_cpu_seconds_total counter",
	"process_max_fds gauge",
	"process_network_receive_bytes_total counter",
	"process_network_transmit_bytes_total counter",
	"process_open_fds gauge",
	"process_resident_memory_bytes gauge",
	"process_start_time_seconds gauge",
	"process_virtual_memory_bytes gauge",
	"process_virtual_memory_max_bytes gauge",
	"zeroclaw_channel_events gauge channel,state",
	"zeroclaw_channel_ignored_total counter channel",
	"zeroclaw_channel_replies gauge channel,state",
	"zeroclaw_channel_restarts_total counter channel",
	"zeroclaw_channel_up gauge channel",
	"zeroclaw_cost_usd_total counter",
	"zeroclaw_gateway_connections_refused_total counter",
	"zeroclaw_gateway_connections_total counter",
	"zeroclaw_gateway_open_connections gauge",
	"zeroclaw_gateway_requests_total counter code,method,route",
	"zeroclaw_heartbeat_deadman gauge",
	"zeroclaw_heartbeat_last_success_timestamp_seconds gauge",
	"zeroclaw_heartbeat_runs_total counter outcome",
	"zeroclaw_provider_errors_total counter",
	"zeroclaw_tokens_total counter direction",
	"zeroclaw_turn_duration_seconds histogram outcome",
	"zeroclaw_turns_total counter outcome",
}

// fedMetrics is a registry that has seen one of everything it counts, so every family has a sample.
func fedMetrics() *Metrics {
	m := NewMetrics()
	m.WatchChannels(func() []api.ChannelStatus {
		return []api.ChannelStatus{{ID: "telegram.default", Healthy: true, Restarts: 2, Ignored: 5,
			Counts: map[string]int{"event:answered": 7, "out:sent": 6, "out:unconfirmed": 1}}}
	})
	m.WatchHeartbeat(func() HeartbeatSample {
		return HeartbeatSample{Enabled: true, Runs: map[string]int64{"ok": 3, "missed": 1}, LastSuccess: time.Unix(1700000000, 0), Deadman: true}
	})
	m.request("/api/status", "GET", 200)
	m.request(`/api/x"y\z`, "GET", 404)
	m.Observe(logs.Entry{Category: logs.CategoryAgent, Action: "complete", Zeroclaw: map[string]any{"duration_ms": int64(1200)}})
	m.Observe(logs.Entry{Category: logs.CategoryAgent, Action: "fail", Attributes: map[string]any{"error_kind": "provider"},
		Zeroclaw: map[string]any{"duration_ms": int64(40)}})
	m.Observe(logs.Entry{Category: logs.CategoryAgent, Action: "cancel", Zeroclaw: map[string]any{"duration_ms": int64(400_000)}})
	m.Recorded("", 10, 5, 0.1)
	m.refused()
	return m
}

func scrapeText(t *testing.T, m *Metrics) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	m.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q, want the text format 0.0.4", ct)
	}
	return rec.Body.Bytes()
}

// The families, their types and label names are the ones pinned above; the text parses as the Prometheus text
// format and promtool's linter accepts it.
func TestMetricsFamiliesPinned(t *testing.T) {
	body := scrapeText(t, fedMetrics())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	var got []string
	for name, f := range fams {
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() != "quantile" && lp.GetName() != "le" {
					labels[lp.GetName()] = true
				}
			}
		}
		names := make([]string, 0, len(labels))
		for l := range labels {
			names = append(names, l)
		}
		slices.Sort(names)
		row := name + " " + strings.ToLower(f.GetType().String())
		if len(names) > 0 {
			row += " " + strings.Join(names, ",")
		}
		got = append(got, row)
	}
	slices.Sort(got)
	for _, w := range pinnedFamilies {
		if !slices.Contains(got, w) {
			t.Errorf("family missing or changed: %q", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(pinnedFamilies, g) {
			t.Errorf("family not pinned: %q", g)
		}
	}

	// The histogram keeps its buckets; the escaped label value comes back as it went in.
	h := fams["zeroclaw_turn_duration_seconds"]
	var les []float64
	var cum []uint64
	for _, m := range h.GetMetric() {
		if m.GetLabel()[0].GetValue() == "completed" {
			for _, b := range m.GetHistogram().GetBucket() {
				les = append(les, b.GetUpperBound())
				cum = append(cum, b.GetCumulativeCount())
			}
			if m.GetHistogram().GetSampleCount() != 1 || m.GetHistogram().GetSampleSum() != 1.2 {
				t.Errorf("completed turns: count %d sum %v, want 1 and 1.2", m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum())
			}
		}
	}
	if want := []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, math.Inf(1)}; !slices.Equal(les, want) {
		t.Errorf("buckets %v, want %v", les, want)
	}
	if want := []uint64{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}; !slices.Equal(cum, want) {
		t.Errorf("cumulative counts %v, want %v (one turn of 1.2 s)", cum, want)
	}
	var routes []string
	for _, m := range fams["zeroclaw_gateway_requests_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "route" {
				routes = append(routes, lp.GetValue())
			}
		}
	}
	if !slices.Contains(routes, `/api/x"y\z`) {
		t.Errorf("routes %q: the escaped label did not round-trip", routes)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is needed to lint /metrics (Debian: apt-get install prometheus)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// Concurrent counting loses nothing, and a scrape in the middle of it is well-formed (run with -race).
func TestMetricsConcurrentCounting(t *testing.T) {
	m := NewMetrics()
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 500 {
				m.WatchHeartbeat(func() HeartbeatSample {
					return HeartbeatSample{Enabled: true, Runs: map[string]int64{"ok": 3, "missed": 1}, LastSuccess: time.Unix(1700000000, 0), Deadman: true}
				})
				m.request("/api/status", "GET", 200)
				m.Observe(logs.Entry{Category: logs.CategoryAgent, Action: "complete", Zeroclaw: map[string]any{"duration_ms": int64(100)}})
				m.Recorded("", 1, 2, 0.5)
			}
		}()
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(bytes.NewReader(m.AppendText(nil))); err != nil {
		t.Fatalf("a scrape during counting does not parse: %v", err)
	}
	for range 8 {
		<-done
	}
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(m.AppendText(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if v := fams["zeroclaw_gateway_requests_total"].GetMetric()[0].GetCounter().GetValue(); v != 4000 {
		t.Errorf("requests %v, want 4000", v)
	}
	if v := fams["zeroclaw_cost_usd_total"].GetMetric()[0].GetCounter().GetValue(); v != 2000 {
		t.Errorf("cost %v, want 2000", v)
	}
	if n := fams["zeroclaw_turn_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleCount(); n != 4000 {
		t.Errorf("histogram count %d, want 4000", n)
	}
}
