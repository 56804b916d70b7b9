package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// channelCollector reads the chat channels' state at each scrape of GET /metrics.
type channelCollector struct {
	status                                  func() []api.ChannelStatus
	up, restarts, ignored, events, outbound *prometheus.Desc
}

// WatchChannels adds the chat channels to the registry: zeroclaw_channel_up (1 while listening and making
// progress), zeroclaw_channel_restarts_total, zeroclaw_channel_ignored_total (strangers' messages), and the
// durable counts zeroclaw_channel_events{state} and zeroclaw_channel_replies{state}. status is called at each
// scrape and must be quick.
func (m *Metrics) WatchChannels(status func() []api.ChannelStatus) {
	l := []string{"channel"}
	m.reg.MustRegister(&channelCollector{status: status,
		up:       prometheus.NewDesc("zeroclaw_channel_up", "1 while the channel listens and makes progress, else 0.", l, nil),
		restarts: prometheus.NewDesc("zeroclaw_channel_restarts_total", "Restarts of the channel's listener after a failure.", l, nil),
		ignored:  prometheus.NewDesc("zeroclaw_channel_ignored_total", "Messages from senders the allow-list does not let in.", l, nil),
		events:   prometheus.NewDesc("zeroclaw_channel_events", "Platform events recorded, by state.", []string{"channel", "state"}, nil),
		outbound: prometheus.NewDesc("zeroclaw_channel_replies", "Replies recorded, by state (sent, pending, unconfirmed, failed...).", []string{"channel", "state"}, nil),
	})
}

func (c *channelCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.restarts, c.ignored, c.events, c.outbound} {
		ch <- d
	}
}

func (c *channelCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.status() {
		up := 0.0
		if s.Healthy {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, s.ID)
		ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(s.Restarts), s.ID)
		ch <- prometheus.MustNewConstMetric(c.ignored, prometheus.CounterValue, float64(s.Ignored), s.ID)
		for k, n := range s.Counts {
			if st, ok := cut(k, "event:"); ok {
				ch <- prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(n), s.ID, st)
			} else if st, ok := cut(k, "out:"); ok {
				ch <- prometheus.MustNewConstMetric(c.outbound, prometheus.GaugeValue, float64(n), s.ID, st)
			}
		}
	}
}

func cut(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}
