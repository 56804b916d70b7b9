package rpc

import (
	"cmp"
	"context"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Heartbeat is what the heartbeat methods need (a *heartbeat.Heartbeat).
type Heartbeat interface {
	Status() api.HeartbeatStatus
	Runs(ctx context.Context, limit int) (api.HeartbeatRunsResult, error)
}

func (s *Server) registerHeartbeat(h Heartbeat) {
	s.register(api.MethodHeartbeatRuns, handle(api.GrantHeartbeatRead, func(ctx context.Context, _ *Peer, p *api.HeartbeatRunsParams) (api.HeartbeatRunsResult, error) {
		if err := router.NonNegative("limit", p.Limit); err != nil {
			return api.HeartbeatRunsResult{}, err
		}
		return h.Runs(ctx, p.Limit)
	}))
}

func equalHeartbeat(a, b *api.HeartbeatStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// heartbeatHealth is the heartbeat as a /health component, present while it is on or its config turned it
// off: error when the config disabled it or a dead-man alert is raised, degraded while slots fail (or were
// missed), else ok; the detail names the last slot's outcome and the next slot.
func heartbeatHealth(st api.HeartbeatStatus) (api.ComponentHealth, bool) {
	switch {
	case st.Problem != "":
		return api.ComponentHealth{Status: "error", Detail: "off: " + st.Problem}, true
	case !st.Enabled:
		return api.ComponentHealth{}, false
	}
	detail := "last slot " + cmp.Or(st.LastStatus, "none yet")
	if st.LastSlotAt != "" {
		detail += " at " + st.LastSlotAt
	}
	if st.NextSlotAt != "" {
		detail += ", next slot at " + st.NextSlotAt
	}
	h := api.ComponentHealth{Status: "ok", Detail: detail}
	switch {
	case st.DeadmanAlertAt != "":
		h.Status, h.Detail = "error", "dead-man alert raised at "+st.DeadmanAlertAt+"; "+detail
	case st.ConsecutiveFailures > 0:
		h.Status = "degraded"
		h.Detail = fmt.Sprintf("%d failed in a row (%s); %s", st.ConsecutiveFailures, st.LastError, detail)
	}
	return h, true
}
