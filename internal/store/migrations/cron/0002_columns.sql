-- The Go step before this file adds the cron_jobs columns an older jobs.db may lack (upstream adds them with
-- ALTER TABLE when missing). Nothing else changes; the statement below only re-asserts an index.
CREATE INDEX IF NOT EXISTS idx_cron_jobs_next_run ON cron_jobs(next_run);
