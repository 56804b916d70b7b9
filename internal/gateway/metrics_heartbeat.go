package gateway

import "time"

// HeartbeatSample is one scrape's view of the heartbeat: whether it is on, slot outcomes counted since the
// daemon started (ok, error, skipped, missed), the last good slot and whether the dead-man alert is latched.
type HeartbeatSample struct {
	Enabled     bool
	Runs        map[string]int64
	LastSuccess time.Time
	Deadman     bool
}

// heartbeatOutcomes are the outcome label values, always all present while the heartbeat is on.
var heartbeatOutcomes = []string{"ok", "error", "skipped", "missed"}

// WatchHeartbeat adds the heartbeat to GET /metrics: zeroclaw_heartbeat_runs_total{outcome},
// zeroclaw_heartbeat_last_success_timestamp_seconds and zeroclaw_heartbeat_deadman (0/1). While the heartbeat
// is off the families are absent. sample is called at each scrape and must be quick.
func (m *Metrics) WatchHeartbeat(sample func() HeartbeatSample) {
	m.mu.Lock()
	m.heartbeat = sample
	m.mu.Unlock()
}

func (m *Metrics) heartbeatFamilies() []family {
	m.mu.Lock()
	read := m.heartbeat
	m.mu.Unlock()
	if read == nil {
		return nil
	}
	s := read()
	if !s.Enabled {
		return nil
	}
	runs := family{name: "zeroclaw_heartbeat_runs_total", typ: "counter", help: "Heartbeat slots ended since the daemon started, by outcome (ok, error, skipped, missed)."}
	for _, o := range heartbeatOutcomes {
		runs.add(float64(s.Runs[o]), "outcome", o)
	}
	last := 0.0
	if !s.LastSuccess.IsZero() {
		last = float64(s.LastSuccess.UnixNano()) / 1e9
	}
	dead := 0.0
	if s.Deadman {
		dead = 1
	}
	return []family{runs,
		{name: "zeroclaw_heartbeat_last_success_timestamp_seconds", typ: "gauge", help: "Unix time of the last good (ok or skipped) heartbeat slot, 0 if none yet.",
			samples: []sample{{value: last}}},
		{name: "zeroclaw_heartbeat_deadman", typ: "gauge", help: "1 while the heartbeat's dead-man alert is latched (no good slot within deadman_timeout_minutes), else 0.",
			samples: []sample{{value: dead}}},
	}
}
