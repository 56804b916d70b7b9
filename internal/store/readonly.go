package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openReadOnly opens the existing database at path for reading only, through SQLite (mode=ro, query_only), so
// a daemon that may be using the file keeps its locks: nothing here opens the file except the connection. A
// missing file is (nil, nil). The caller closes the result.
func openReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	c, err := sql.Open("sqlite", "file:"+uriEscape(path)+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	c.SetMaxOpenConns(1)
	if err := c.PingContext(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return c, nil
}

// ReadCronJobs lists the jobs of the cron database at path, soonest next_run first, without a CronStore and
// without writing anything: what `zeroclaw cron list` shows when no daemon runs. A missing file has no jobs.
func ReadCronJobs(ctx context.Context, path string) ([]CronJob, error) {
	c, err := openReadOnly(ctx, path)
	if c == nil || err != nil {
		return nil, err
	}
	defer c.Close()
	return queryCronJobs(ctx, c, "list "+path, cronJobSelect+" ORDER BY next_run ASC, id ASC")
}
