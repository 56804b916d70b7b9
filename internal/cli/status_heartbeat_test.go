package cli

import (
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// status's heartbeat line names the last outcome, the failures in a row, a raised dead-man alert and the next slot.
func TestHeartbeatLineNamesTheNextSlot(t *testing.T) {
	got := heartbeatLine(nil, api.HeartbeatStatus{Enabled: true, Agent: "default", IntervalMinutes: 30, LastStatus: "error",
		ConsecutiveFailures: 2, DeadmanAlertAt: "x", NextSlotAt: "2026-01-01T01:00:00Z"})
	if want := "every 30 min as default, last slot error (2 failed in a row), dead-man alert raised, next slot 2026-01-01T01:00:00Z"; got != want {
		t.Fatalf("heartbeatLine = %q, want %q", got, want)
	}
	if got := heartbeatLine(nil, api.HeartbeatStatus{Problem: "heartbeat.agent: missing"}); got != "off: heartbeat.agent: missing" {
		t.Fatalf("off: %q", got)
	}
}
