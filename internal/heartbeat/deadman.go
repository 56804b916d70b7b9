package heartbeat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// deadman sends the dead-man alert once per episode: when no slot has been good (ok or skipped) for
// deadman_timeout_minutes, counting failed and missed slots and the time the daemon was down. The episode's
// latch (alert_sent_at) is kept in history.db, so a restart during an episode does not alert again; a good
// tick ends the episode. A failed send is retried at the next check.
func (h *Heartbeat) deadman(ctx context.Context, hb config.HeartbeatConfig) {
	if !hb.Enabled || hb.DeadmanTimeoutMinutes <= 0 {
		return
	}
	h.deadmanMu.Lock()
	defer h.deadmanMu.Unlock()
	limit := time.Duration(hb.DeadmanTimeoutMinutes) * minute
	now := h.o.Clock.Now()
	h.mu.Lock()
	sch, prepared := h.st.sch, h.st.prepared
	h.mu.Unlock()
	if !prepared || sch.LastOKAt.IsZero() || !sch.AlertSentAt.IsZero() || now.Sub(sch.LastOKAt) <= limit {
		return
	}
	text := fmt.Sprintf("⚠️ Heartbeat dead-man's switch: no successful tick in %d minutes", int(now.Sub(sch.LastOKAt)/minute))
	target := deadmanTarget(hb)
	switch {
	case target.Channel == "" || target.To == "":
		h.log.Warn("heartbeat dead-man alert has no channel to go to (set heartbeat.deadman_channel and deadman_to)", "alert", text)
	case h.o.Notifier == nil:
		h.log.Warn("heartbeat dead-man alert not sent: no channel notifier", "channel", target.Channel, "alert", text)
	default:
		sctx, cancel := context.WithTimeout(ctx, sendTimeout)
		err := h.o.Notifier.Send(sctx, target, text)
		cancel()
		if err != nil {
			h.log.Warn("heartbeat dead-man alert not delivered; retried at the next check", "channel", target.Channel, "err", err)
			return
		}
		h.log.Warn("heartbeat dead-man alert sent", "channel", target.Channel)
	}
	// Only this function sets the latch (under deadmanMu); a good tick meanwhile ended the episode: keep it ended.
	if _, err := h.update(ctx, func(s *store.HeartbeatSchedule) {
		if s.LastOKAt.Equal(sch.LastOKAt) {
			s.AlertSentAt = now
		}
	}); err != nil {
		h.log.Warn("heartbeat schedule not saved", "err", err)
	}
}

// watch looks at the dead-man switch every DeadmanCheck, on its own: a slot that hangs (a provider that never
// answers, up to task_timeout_secs per task) does not hold the alert back.
func (h *Heartbeat) watch(ctx context.Context) {
	for {
		t := h.o.Clock.NewTimer(DeadmanCheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		h.deadman(ctx, h.o.Config().Heartbeat)
	}
}

// deadmanTarget is deadman_channel/deadman_to, falling back to target/to.
func deadmanTarget(hb config.HeartbeatConfig) Target {
	t := Target{Channel: strings.TrimSpace(hb.DeadmanChannel), To: strings.TrimSpace(hb.DeadmanTo)}
	if t.Channel == "" {
		t.Channel = strings.TrimSpace(hb.Target)
	}
	if t.To == "" {
		t.To = strings.TrimSpace(hb.To)
	}
	return t
}
