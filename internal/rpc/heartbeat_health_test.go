package rpc

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// The heartbeat's /health component: absent while simply off, error when its config turned it off or a
// dead-man alert is raised, degraded while slots fail, ok otherwise; the detail names the last and next slot.
func TestHeartbeatHealthComponent(t *testing.T) {
	if _, ok := heartbeatHealth(api.HeartbeatStatus{}); ok {
		t.Fatal("a heartbeat simply off has a health component")
	}
	for _, c := range []struct {
		st        api.HeartbeatStatus
		want      string
		detailHas []string
	}{
		{api.HeartbeatStatus{Problem: "heartbeat.agent: missing"}, "error", []string{"off: heartbeat.agent: missing"}},
		{api.HeartbeatStatus{Enabled: true, NextSlotAt: "2026-01-01T00:30:00Z"}, "ok", []string{"none yet", "next slot at 2026-01-01T00:30:00Z"}},
		{api.HeartbeatStatus{Enabled: true, LastStatus: "ok", LastSlotAt: "2026-01-01T00:00:00Z", NextSlotAt: "2026-01-01T00:30:00Z"}, "ok",
			[]string{"last slot ok at 2026-01-01T00:00:00Z", "next slot at 2026-01-01T00:30:00Z"}},
		{api.HeartbeatStatus{Enabled: true, LastStatus: "error", ConsecutiveFailures: 2, LastError: "provider down"}, "degraded",
			[]string{"2 failed in a row (provider down)", "last slot error"}},
		{api.HeartbeatStatus{Enabled: true, LastStatus: "error", ConsecutiveFailures: 9, DeadmanAlertAt: "2026-01-01T05:00:00Z"}, "error",
			[]string{"dead-man alert raised at 2026-01-01T05:00:00Z"}},
	} {
		h, ok := heartbeatHealth(c.st)
		if !ok || h.Status != c.want {
			t.Errorf("%+v: %+v, %v; want %s", c.st, h, ok, c.want)
			continue
		}
		for _, s := range c.detailHas {
			if !strings.Contains(h.Detail, s) {
				t.Errorf("%+v: detail %q lacks %q", c.st, h.Detail, s)
			}
		}
	}
}
