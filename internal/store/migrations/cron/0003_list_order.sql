-- cron/list pages through the jobs in its order (next_run, then id). The index of upstream's schema is on
-- next_run alone, so a page sorted every row to break ties by id; this one holds the whole order, so a page
-- is read off the index. An upstream daemon sharing the file keeps the index current like any other.
CREATE INDEX IF NOT EXISTS idx_cron_jobs_next_run_id ON cron_jobs(next_run, id);
