-- Heartbeat run history (spec upstream/heartbeat.md §6): upstream's table and indexes, IF NOT EXISTS, because a
-- history.db written by the upstream daemon already has them with user_version 0.

CREATE TABLE IF NOT EXISTS heartbeat_runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    task_text     TEXT NOT NULL,
    task_priority TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    finished_at   TEXT NOT NULL,
    status        TEXT NOT NULL,
    output        TEXT,
    duration_ms   INTEGER
);
CREATE INDEX IF NOT EXISTS idx_hb_runs_started ON heartbeat_runs(started_at);
CREATE INDEX IF NOT EXISTS idx_hb_runs_task ON heartbeat_runs(task_text);
