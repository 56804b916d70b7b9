package doctor

import (
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// checkHeartbeat reports the heartbeat: turned off by a config problem (an error: it was asked for and does
// not run), failing slots and a raised dead-man alert (warnings), or running.
func checkHeartbeat(r *report, st api.HeartbeatStatus) {
	switch {
	case st.Problem != "":
		r.fail(CategoryHeartbeat, "heartbeat-disabled-by-config", "", "the heartbeat is off: "+st.Problem,
			"fix [heartbeat] in config.toml (heartbeat.agent must name a configured [agents.<alias>]), then zeroclaw config reload")
	case !st.Enabled:
		r.ok(CategoryHeartbeat, "heartbeat-off", "the heartbeat is off ([heartbeat] enabled = false)")
	case st.DeadmanAlertAt != "":
		r.warn(CategoryHeartbeat, "heartbeat-deadman", "", fmt.Sprintf("the heartbeat's dead-man alert is raised since %s: %d slot(s) failed or missed in a row (%s)",
			st.DeadmanAlertAt, st.ConsecutiveFailures, st.LastError), "zeroclaw heartbeat runs shows each slot's outcome and error")
	case st.ConsecutiveFailures > 0:
		r.warn(CategoryHeartbeat, "heartbeat-failing", "", fmt.Sprintf("the heartbeat's last %d slot(s) failed or were missed: %s",
			st.ConsecutiveFailures, st.LastError), "zeroclaw heartbeat runs shows each slot's outcome and error")
	default:
		r.ok(CategoryHeartbeat, "heartbeat-running", fmt.Sprintf("the heartbeat runs agent %q every %d min (next slot %s)",
			st.Agent, st.IntervalMinutes, st.NextSlotAt))
	}
}
