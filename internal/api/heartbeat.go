package api

// MethodHeartbeatRuns lists the heartbeat's run history (ours: upstream has no heartbeat method).
const MethodHeartbeatRuns = "heartbeat/runs"

// Heartbeat run statuses: ok and error are upstream's (error is a failed run); skipped (nothing to run),
// missed (the slot came while the daemon was down) and running are ours.
const (
	HeartbeatOK      = "ok"
	HeartbeatError   = "error"
	HeartbeatSkipped = "skipped"
	HeartbeatMissed  = "missed"
	HeartbeatRunning = "running"
)

// HeartbeatRunsParams are heartbeat/runs' params. Limit <= 0 means 50; at most 1000.
type HeartbeatRunsParams struct {
	Limit int `json:"limit,omitempty"`
}

// HeartbeatRun is one row of heartbeat/history.db: the outcome of one task in one scheduled slot, or of the
// whole slot when no task ran (TaskText empty).
type HeartbeatRun struct {
	ID           int64  `json:"id"`
	SlotAt       string `json:"slot_at"` // RFC 3339 UTC
	TaskText     string `json:"task_text"`
	TaskPriority string `json:"task_priority"`
	StartedAt    string `json:"started_at"`
	FinishedAt   string `json:"finished_at"`
	Status       string `json:"status"`
	Output       string `json:"output,omitempty"`
	DurationMS   int64  `json:"duration_ms"`
}

// HeartbeatRunsResult is heartbeat/runs' result: the state, then the runs newest first.
type HeartbeatRunsResult struct {
	Heartbeat HeartbeatStatus `json:"heartbeat"`
	Runs      []HeartbeatRun  `json:"runs"`
}

// HeartbeatStatus is the heartbeat's state (status.heartbeat, doctor).
type HeartbeatStatus struct {
	Enabled         bool   `json:"enabled"`
	Agent           string `json:"agent,omitempty"`
	IntervalMinutes int    `json:"interval_minutes,omitempty"`
	// Problem says why a configured heartbeat is off: the [heartbeat] error the daemon's start disabled.
	Problem             string `json:"problem,omitempty"`
	NextSlotAt          string `json:"next_slot_at,omitempty"`
	Running             bool   `json:"running"`
	LastSlotAt          string `json:"last_slot_at,omitempty"`
	LastStatus          string `json:"last_status,omitempty"`
	LastOKAt            string `json:"last_ok_at,omitempty"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	LastError           string `json:"last_error,omitempty"`
	// DeadmanAlertAt is when the current dead-man episode was alerted; empty when none is.
	DeadmanAlertAt string `json:"deadman_alert_at,omitempty"`
}
