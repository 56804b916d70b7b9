package config

import "strings"

// HeartbeatConfig is [heartbeat]: periodic runs of the tasks in the heartbeat agent's HEARTBEAT.md (upstream's
// HeartbeatConfig, spec upstream/heartbeat.md §1). Keys, aliases and defaults are upstream's.
type HeartbeatConfig struct {
	Enabled               bool   `toml:"enabled" desc:"Run the heartbeat: the tasks of the heartbeat agent's HEARTBEAT.md, every interval."`
	Agent                 string `toml:"agent" alias:"agents" note:"required when enabled" desc:"Agent ([agents.<alias>]) whose workspace HEARTBEAT.md is read and which runs the tasks."`
	IntervalMinutes       int    `toml:"interval_minutes" desc:"Minutes between heartbeat ticks (at least 1)."`
	TwoPhase              bool   `toml:"two_phase" desc:"Ask the model first which tasks should run now (phase 1), then run only those."`
	Message               string `toml:"message" note:"empty: none" desc:"Task run when HEARTBEAT.md lists no runnable task."`
	Target                string `toml:"target" also:"channel" note:"empty: no delivery" desc:"Channel type the results are announced on (e.g. telegram); set with to."`
	To                    string `toml:"to" also:"recipient" note:"empty: no delivery" desc:"Recipient on the target channel; set with target."`
	Adaptive              bool   `toml:"adaptive" desc:"Adapt the interval: back off after failures, tighten for high-priority tasks."`
	MinIntervalMinutes    int    `toml:"min_interval_minutes" desc:"Shortest adaptive interval, in minutes."`
	MaxIntervalMinutes    int    `toml:"max_interval_minutes" desc:"Longest adaptive interval, in minutes."`
	DeadmanTimeoutMinutes int    `toml:"deadman_timeout_minutes" note:"0: off" desc:"Minutes without a successful tick after which one dead-man alert is sent."`
	DeadmanChannel        string `toml:"deadman_channel" note:"empty: target" desc:"Channel type the dead-man alert goes to."`
	DeadmanTo             string `toml:"deadman_to" note:"empty: to" desc:"Recipient of the dead-man alert."`
	MaxRunHistory         int    `toml:"max_run_history" desc:"Runs kept in heartbeat/history.db (at least 1)."`
	LoadSessionContext    bool   `toml:"load_session_context" desc:"Prepend recent chat history with target/to to each task's prompt."`
	TaskTimeoutSecs       int    `toml:"task_timeout_secs" note:"0: no timeout" desc:"Seconds one agent invocation of the heartbeat may take."`
}

// DefaultHeartbeat is [heartbeat] with upstream's defaults (off).
func DefaultHeartbeat() HeartbeatConfig {
	return HeartbeatConfig{IntervalMinutes: 30, TwoPhase: true, MinIntervalMinutes: 5, MaxIntervalMinutes: 120,
		MaxRunHistory: 100, TaskTimeoutSecs: 600}
}

// validateHeartbeat checks [heartbeat] as upstream's Config::validate does, plus the ranges its unsigned
// types enforce. A problem anywhere under [heartbeat] disables the whole section at start (lenient.go), so a
// daemon with a bad heartbeat runs without one and says why, instead of restarting a worker forever.
func validateHeartbeat(cfg *Config, v *validator) {
	h := cfg.Heartbeat
	at := func(k string) Path { return Path{"heartbeat", k} }
	if h.Enabled {
		switch a := strings.TrimSpace(h.Agent); {
		case a == "":
			v.add(at("agent"), "must reference a configured agent when heartbeat.enabled = true")
		default:
			if _, ok := cfg.Agents[a]; !ok {
				v.add(at("agent"), "heartbeat.agent = %q but no [agents.%s] entry is configured", a, a)
			}
		}
	}
	for _, f := range []struct {
		key string
		val int
	}{{"interval_minutes", h.IntervalMinutes}, {"min_interval_minutes", h.MinIntervalMinutes},
		{"max_interval_minutes", h.MaxIntervalMinutes}, {"deadman_timeout_minutes", h.DeadmanTimeoutMinutes},
		{"max_run_history", h.MaxRunHistory}, {"task_timeout_secs", h.TaskTimeoutSecs}} {
		if f.val < 0 {
			v.add(at(f.key), "must not be negative, got %d", f.val)
		}
	}
	if h.Adaptive && h.MinIntervalMinutes > h.MaxIntervalMinutes {
		v.add(at("min_interval_minutes"), "must not exceed max_interval_minutes (%d), got %d", h.MaxIntervalMinutes, h.MinIntervalMinutes)
	}
	if (strings.TrimSpace(h.Target) == "") != (strings.TrimSpace(h.To) == "") {
		if h.Target == "" {
			v.add(at("target"), "heartbeat.target is required when heartbeat.to is set")
		} else {
			v.add(at("to"), "heartbeat.to is required when heartbeat.target is set")
		}
	}
}
