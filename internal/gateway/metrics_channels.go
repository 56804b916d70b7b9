package gateway

import (
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// WatchChannels adds the chat channels to GET /metrics: zeroclaw_channel_up (1 while listening and making
// progress), zeroclaw_channel_restarts_total, zeroclaw_channel_ignored_total (strangers' messages), and the
// durable counts zeroclaw_channel_events{state} and zeroclaw_channel_replies{state}. status is called at each
// scrape and must be quick.
func (m *Metrics) WatchChannels(status func() []api.ChannelStatus) {
	m.mu.Lock()
	m.channels = append(m.channels, status)
	m.mu.Unlock()
}

// channelFamilies reads the channels' state for one scrape.
func (m *Metrics) channelFamilies() []family {
	m.mu.Lock()
	watch := slices.Clone(m.channels)
	m.mu.Unlock()
	up := family{name: "zeroclaw_channel_up", typ: "gauge", help: "1 while the channel listens and makes progress, else 0."}
	restarts := family{name: "zeroclaw_channel_restarts_total", typ: "counter", help: "Restarts of the channel's listener after a failure."}
	ignored := family{name: "zeroclaw_channel_ignored_total", typ: "counter", help: "Messages from senders the allow-list does not let in."}
	events := family{name: "zeroclaw_channel_events", typ: "gauge", help: "Platform events recorded, by state."}
	replies := family{name: "zeroclaw_channel_replies", typ: "gauge", help: "Replies recorded, by state (sent, pending, unconfirmed, failed...)."}
	var all []api.ChannelStatus
	for _, status := range watch {
		all = append(all, status()...)
	}
	slices.SortStableFunc(all, func(a, b api.ChannelStatus) int { return strings.Compare(a.ID, b.ID) })
	for _, s := range all {
		v := 0.0
		if s.Healthy {
			v = 1
		}
		up.add(v, "channel", s.ID)
		restarts.add(float64(s.Restarts), "channel", s.ID)
		ignored.add(float64(s.Ignored), "channel", s.ID)
		keys := make([]string, 0, len(s.Counts))
		for k := range s.Counts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if st, ok := strings.CutPrefix(k, "event:"); ok && st != "" {
				events.add(float64(s.Counts[k]), "channel", s.ID, "state", st)
			} else if st, ok := strings.CutPrefix(k, "out:"); ok && st != "" {
				replies.add(float64(s.Counts[k]), "channel", s.ID, "state", st)
			}
		}
	}
	return []family{up, restarts, ignored, events, replies}
}
