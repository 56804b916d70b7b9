-- Ours: every row names the scheduled slot it is the outcome of (slot_at, added by the Go step when missing),
-- and one schedule row keeps the next slot, the last good tick and the dead-man latch across restarts, so a
-- slot missed while the daemon was down is recorded at start and no slot runs twice.

CREATE INDEX IF NOT EXISTS idx_hb_runs_slot ON heartbeat_runs(slot_at);

CREATE TABLE IF NOT EXISTS heartbeat_schedule (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    next_slot_at  TEXT NOT NULL,
    interval_ms   INTEGER NOT NULL,
    last_ok_at    TEXT,
    alert_sent_at TEXT
);
