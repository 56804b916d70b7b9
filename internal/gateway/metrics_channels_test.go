package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
)

// gathered is one scrape's samples read back by the Prometheus text parser, keyed name/label values...
func gathered(t *testing.T, m *gateway.Metrics) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(m.AppendText(nil))))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			key := mf.GetName()
			for _, lp := range mt.GetLabel() {
				key += "/" + lp.GetValue()
			}
			switch {
			case mt.GetGauge() != nil:
				got[key] = mt.GetGauge().GetValue()
			case mt.GetCounter() != nil:
				got[key] = mt.GetCounter().GetValue()
			}
		}
	}
	return got
}

// The channels' state is read at each scrape: up, restarts, strangers ignored, and the durable counts by state.
func TestChannelMetrics(t *testing.T) {
	m := gateway.NewMetrics()
	chans := []api.ChannelStatus{{ID: "telegram.default", Healthy: true, Restarts: 2, Ignored: 5,
		Counts: map[string]int{"event:answered": 7, "out:sent": 6, "out:unconfirmed": 1}}}
	m.WatchChannels(func() []api.ChannelStatus { return chans })
	got := gathered(t, m)
	for k, want := range map[string]float64{"zeroclaw_channel_up/telegram.default": 1, "zeroclaw_channel_restarts_total/telegram.default": 2,
		"zeroclaw_channel_ignored_total/telegram.default": 5, "zeroclaw_channel_events/telegram.default/answered": 7,
		"zeroclaw_channel_replies/telegram.default/unconfirmed": 1} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	chans[0].Healthy = false
	if v, ok := gathered(t, m)["zeroclaw_channel_up/telegram.default"]; !ok || v != 0 {
		t.Fatalf("a failing channel reported up = %v (present %v), want 0", v, ok)
	}
}

// The heartbeat's families carry its counts while it is on, and are absent while it is off.
func TestHeartbeatMetrics(t *testing.T) {
	m := gateway.NewMetrics()
	s := gateway.HeartbeatSample{Enabled: true, Runs: map[string]int64{"ok": 4, "error": 2, "missed": 3}, LastSuccess: time.Unix(1700000000, 500_000_000)}
	m.WatchHeartbeat(func() gateway.HeartbeatSample { return s })
	got := gathered(t, m)
	for k, want := range map[string]float64{"zeroclaw_heartbeat_runs_total/ok": 4, "zeroclaw_heartbeat_runs_total/error": 2,
		"zeroclaw_heartbeat_runs_total/skipped": 0, "zeroclaw_heartbeat_runs_total/missed": 3,
		"zeroclaw_heartbeat_last_success_timestamp_seconds": 1700000000.5, "zeroclaw_heartbeat_deadman": 0} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	s.Deadman = true
	if v := gathered(t, m)["zeroclaw_heartbeat_deadman"]; v != 1 {
		t.Errorf("latched dead-man reported %v, want 1", v)
	}
	s.Enabled = false
	for k := range gathered(t, m) {
		if strings.HasPrefix(k, "zeroclaw_heartbeat_") {
			t.Errorf("heartbeat off, yet %s is served", k)
		}
	}
}
