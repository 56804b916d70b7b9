package gateway_test

import (
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
)

// The channels' state is read at each scrape: up, restarts, strangers ignored, and the durable counts by state.
func TestChannelMetrics(t *testing.T) {
	m := gateway.NewMetrics()
	chans := []api.ChannelStatus{{ID: "telegram.default", Healthy: true, Restarts: 2, Ignored: 5,
		Counts: map[string]int{"event:answered": 7, "out:sent": 6, "out:unconfirmed": 1}}}
	m.WatchChannels(func() []api.ChannelStatus { return chans })
	got := map[string]float64{}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
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
	for k, want := range map[string]float64{"zeroclaw_channel_up/telegram.default": 1, "zeroclaw_channel_restarts_total/telegram.default": 2,
		"zeroclaw_channel_ignored_total/telegram.default": 5, "zeroclaw_channel_events/telegram.default/answered": 7,
		"zeroclaw_channel_replies/telegram.default/unconfirmed": 1} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	chans[0].Healthy = false
	mfs, _ = m.Registry().Gather()
	for _, mf := range mfs {
		if mf.GetName() == "zeroclaw_channel_up" && mf.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Fatal("a failing channel still reported up")
		}
	}
}
