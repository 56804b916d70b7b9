-- Cron jobs schema (state.md §7, upstream/cron-logs-costs.md §A1). The statements are upstream's, IF NOT EXISTS,
-- because a jobs.db written by the upstream daemon already has these objects with user_version 0. The
-- columns upstream added over time are added by the Go step of migration 2, in upstream's order, so a fresh
-- database has exactly the shape of an upstream one.

CREATE TABLE IF NOT EXISTS cron_jobs (
    id               TEXT PRIMARY KEY,
    expression       TEXT NOT NULL,
    command          TEXT NOT NULL,
    schedule         TEXT,
    job_type         TEXT NOT NULL DEFAULT 'shell',
    prompt           TEXT,
    name             TEXT,
    session_target   TEXT NOT NULL DEFAULT 'isolated',
    model            TEXT,
    enabled          INTEGER NOT NULL DEFAULT 1,
    delivery         TEXT,
    delete_after_run INTEGER NOT NULL DEFAULT 0,
    allowed_tools    TEXT,
    created_at       TEXT NOT NULL,
    next_run         TEXT NOT NULL,
    last_run         TEXT,
    last_status      TEXT,
    last_output      TEXT
);
CREATE INDEX IF NOT EXISTS idx_cron_jobs_next_run ON cron_jobs(next_run);

CREATE TABLE IF NOT EXISTS cron_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    status      TEXT NOT NULL,
    output      TEXT,
    duration_ms INTEGER,
    FOREIGN KEY (job_id) REFERENCES cron_jobs(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_cron_runs_job_id ON cron_runs(job_id);
CREATE INDEX IF NOT EXISTS idx_cron_runs_started_at ON cron_runs(started_at);
CREATE INDEX IF NOT EXISTS idx_cron_runs_job_started ON cron_runs(job_id, started_at);
