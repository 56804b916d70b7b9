package heartbeat

import (
	"context"
	"fmt"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Status reports the heartbeat's state: the config in force, the schedule, the last outcome and the dead-man
// latch.
func (h *Heartbeat) Status() api.HeartbeatStatus {
	hb := h.o.Config().Heartbeat
	out := api.HeartbeatStatus{Enabled: hb.Enabled, Agent: hb.Agent}
	if h.o.Problem != nil {
		out.Problem = h.o.Problem()
	}
	if hb.Enabled {
		out.IntervalMinutes = max(hb.IntervalMinutes, 1)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.st
	if hb.Enabled && s.prepared {
		out.NextSlotAt = stamp(s.sch.NextSlotAt)
	}
	out.Running, out.LastSlotAt, out.LastStatus = s.running, stamp(s.lastSlot), s.lastStatus
	out.LastOKAt, out.ConsecutiveFailures, out.LastError = stamp(s.sch.LastOKAt), s.failures, s.err
	out.DeadmanAlertAt = stamp(s.sch.AlertSentAt)
	return out
}

// MaxRunsLimit bounds one heartbeat/runs answer.
const MaxRunsLimit = 1000

// Runs returns the state and up to limit runs, newest first (limit <= 0: 50).
func (h *Heartbeat) Runs(ctx context.Context, limit int) (api.HeartbeatRunsResult, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxRunsLimit)
	rows, err := h.o.Store.Runs(ctx, limit)
	if err != nil {
		return api.HeartbeatRunsResult{}, fmt.Errorf("heartbeat: runs: %w", err)
	}
	out := api.HeartbeatRunsResult{Heartbeat: h.Status(), Runs: make([]api.HeartbeatRun, 0, len(rows))}
	for _, r := range rows {
		out.Runs = append(out.Runs, runOf(r))
	}
	return out, nil
}

func runOf(r store.HeartbeatRun) api.HeartbeatRun {
	return api.HeartbeatRun{ID: r.ID, SlotAt: stamp(r.SlotAt), TaskText: r.TaskText, TaskPriority: r.TaskPriority,
		StartedAt: stamp(r.StartedAt), FinishedAt: stamp(r.FinishedAt), Status: r.Status, Output: r.Output,
		DurationMS: r.DurationMS}
}

// Metrics is what GET /metrics shows of the heartbeat: whether it is on, the slot outcomes counted since the
// daemon started (ok, error, skipped, missed), the last good slot and whether the dead-man alert is latched.
type Metrics struct {
	Enabled     bool
	Runs        map[string]int64
	LastSuccess time.Time
	Deadman     bool
}

// Metrics reads the counters for one scrape.
func (h *Heartbeat) Metrics() Metrics {
	out := Metrics{Enabled: h.o.Config().Heartbeat.Enabled, Runs: make(map[string]int64, len(outcomes))}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, o := range outcomes {
		out.Runs[o] = h.st.runs[i]
	}
	out.LastSuccess, out.Deadman = h.st.sch.LastOKAt, !h.st.sch.AlertSentAt.IsZero()
	return out
}
