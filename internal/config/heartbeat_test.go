package config

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const heartbeatBase = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
`

// Upstream's keys, aliases and defaults are read as upstream reads them.
func TestHeartbeatKeysAndDefaults(t *testing.T) {
	m, err := Open(writeConfig(t, heartbeatBase), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Current().Heartbeat, DefaultHeartbeat(); got != want || got.Enabled || got.IntervalMinutes != 30 ||
		!got.TwoPhase || got.MaxRunHistory != 100 || got.TaskTimeoutSecs != 600 {
		t.Fatalf("defaults = %+v", got)
	}
	m, err = Open(writeConfig(t, heartbeatBase+`
[heartbeat]
enabled = true
agent = "default"
interval_minutes = 7
two_phase = false
channel = "telegram"
recipient = "42"
adaptive = true
deadman_timeout_minutes = 90
`), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Current().Heartbeat
	if !h.Enabled || h.Agent != "default" || h.IntervalMinutes != 7 || h.TwoPhase || h.Target != "telegram" ||
		h.To != "42" || !h.Adaptive || h.DeadmanTimeoutMinutes != 90 || h.MinIntervalMinutes != 5 {
		t.Fatalf("heartbeat = %+v", h)
	}
}

// A bad [heartbeat] (no agent, an unknown agent, a negative interval, half a delivery) is refused by the strict
// load with upstream's message, and at a daemon's start turns the heartbeat off with one warning while the
// rest runs: never a worker that fails and restarts forever (clawrium#982).
func TestHeartbeatBadSectionDisablesOnlyTheHeartbeat(t *testing.T) {
	for name, c := range map[string]struct{ section, path, msg string }{
		"missing agent":  {"enabled = true\n", "heartbeat.agent", "must reference a configured agent when heartbeat.enabled = true"},
		"unknown agent":  {"enabled = true\nagent = \"ghost\"\n", "heartbeat.agent", `heartbeat.agent = "ghost" but no [agents.ghost] entry is configured`},
		"bad interval":   {"enabled = true\nagent = \"default\"\ninterval_minutes = -5\n", "heartbeat.interval_minutes", "must not be negative"},
		"half delivery":  {"enabled = true\nagent = \"default\"\ntarget = \"telegram\"\n", "heartbeat.to", "heartbeat.to is required when heartbeat.target is set"},
		"adaptive range": {"enabled = true\nagent = \"default\"\nadaptive = true\nmin_interval_minutes = 200\n", "heartbeat.min_interval_minutes", "must not exceed"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, heartbeatBase+"\n[heartbeat]\n"+c.section)
			_, err := Open(path, nil, nil, nil)
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != c.path || !strings.Contains(ve.Problems[0].Message, c.msg) {
				t.Fatalf("strict Open = %v, want one problem at %s: %s", err, c.path, c.msg)
			}
			m, err := OpenLenient(path, nil, nil, nil)
			if err != nil {
				t.Fatalf("the daemon's start failed on a bad [heartbeat]: %v", err)
			}
			if m.Current().Heartbeat.Enabled {
				t.Fatal("a bad [heartbeat] left the heartbeat enabled")
			}
			if _, ok := m.Current().Agents["default"]; !ok {
				t.Fatal("a bad [heartbeat] disabled the agent")
			}
			checkDisabled(t, m, c.path)
		})
	}
	// A value of the wrong type is a file error for the strict load, and the same one disabled section at start.
	path := writeConfig(t, heartbeatBase+"\n[heartbeat]\nenabled = true\nagent = \"default\"\ninterval_minutes = \"often\"\n")
	if _, err := Open(path, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "heartbeat.interval_minutes") {
		t.Fatalf("strict Open = %v", err)
	}
	m, err := OpenLenient(path, nil, nil, nil)
	if err != nil || m.Current().Heartbeat.Enabled {
		t.Fatalf("OpenLenient = %v (heartbeat on: %v)", err, err == nil && m.Current().Heartbeat.Enabled)
	}
	checkDisabled(t, m, "heartbeat.interval_minutes")
}

func checkDisabled(t *testing.T, m *Manager, path string) {
	t.Helper()
	d := m.Disabled()
	if len(d) != 1 || d[0].Path != path {
		t.Fatalf("disabled = %+v, want the one heartbeat problem", d)
	}
	var warned int
	for _, w := range m.Warnings() {
		if strings.HasPrefix(w, "config: heartbeat disabled: "+path) {
			warned++
		}
	}
	if warned != 1 {
		t.Fatalf("warnings = %q, want one 'config: heartbeat disabled' line", m.Warnings())
	}
}

// A set that would enable the heartbeat without an agent is refused with the field's error; the file is kept.
func TestHeartbeatSetWithoutAgentRefused(t *testing.T) {
	m, err := Open(writeConfig(t, heartbeatBase), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Set(context.Background(), "heartbeat.enabled", json.RawMessage("true"), nil)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "heartbeat.agent") {
		t.Fatalf("Set = %v, want an invalid-config error naming heartbeat.agent", err)
	}
	if m.Current().Heartbeat.Enabled {
		t.Fatal("the refused set took effect")
	}
	if _, err := m.Set(context.Background(), "heartbeat.agent", json.RawMessage(`"default"`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Set(context.Background(), "heartbeat.enabled", json.RawMessage("true"), nil); err != nil {
		t.Fatal(err)
	}
	if h := m.Current().Heartbeat; !h.Enabled || h.Agent != "default" {
		t.Fatalf("heartbeat = %+v", h)
	}
}
