package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// The read-only views below answer logs, costs and cron list when no daemon runs, from the install's files, as
// doctor does: the JSONL logs and ledger are plain appends, and the cron database is read through a read-only
// SQLite connection (never opened any other way), so a daemon starting meanwhile loses nothing.

// offlineConfig is the install's config as a daemon would load it, the built-in default when there is no file.
func offlineConfig(layout install.Layout, env Env) (*config.Config, error) {
	path := layout.ConfigPath()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return config.Default(), nil
	}
	cfg, _, err := config.Load(path, env.Environ)
	if err != nil {
		return nil, hint.With(fmt.Errorf("read %s: %w", path, err), "zeroclaw config validate")
	}
	return cfg, nil
}

// offlineLogs queries data/state/runtime-trace.jsonl with the persistence of the config.
func offlineLogs(layout install.Layout, env Env, q api.LogsQueryParams) ([]json.RawMessage, error) {
	cfg, err := offlineConfig(layout, env)
	if err != nil {
		return nil, err
	}
	o := cfg.Observability
	h := logs.NewHub(logs.Options{
		Path: filepath.Join(layout.StateDir(), "runtime-trace.jsonl"),
		Persistence: func() logs.Persistence {
			return logs.Persistence{Mode: o.LogPersistence, MaxEntries: o.RollingMaxEntries(), MaxBytes: o.LogPersistenceMaxBytes,
				RotateDaily: o.LogPersistenceRotateDaily, MaxFiles: o.LogPersistenceRetentionMax}
		},
	})
	defer h.Close()
	f := logs.Filter{SinceTS: q.SinceTS, Category: q.Category}
	if q.SeverityMin != nil {
		f.SeverityMin = *q.SeverityMin
	}
	limit := 0
	if q.Limit != nil {
		limit = *q.Limit
	}
	page, err := h.Query(f, limit)
	if errors.Is(err, logs.ErrNotPersisted) {
		return nil, hint.With(say("cli-logs-not-persisted"),
			"zeroclaw config set observability.log_persistence rolling")
	}
	return page.Events, err
}

// offlineCosts reads data/state/costs.jsonl as cost/query does.
func offlineCosts(layout install.Layout, env Env, p api.CostQueryParams) (json.RawMessage, error) {
	cfg, err := offlineConfig(layout, env)
	if err != nil {
		return nil, err
	}
	bound := func(name, raw string) (time.Time, error) {
		if raw == "" {
			return time.Time{}, nil
		}
		at, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return time.Time{}, hint.With(say("cli-costs-bad-time", "flag", "--"+name, "value", fmt.Sprintf("%q", raw)), "--"+name+" 2026-01-01T00:00:00Z")
		}
		return at.UTC(), nil
	}
	from, err := bound("from", p.From)
	if err != nil {
		return nil, err
	}
	to, err := bound("to", p.To)
	if err != nil {
		return nil, err
	}
	ledger := store.OpenCostLedger(filepath.Join(layout.StateDir(), "costs.jsonl"))
	defer ledger.Close()
	t := cost.NewTracker(cost.Options{Ledger: ledger, Config: func() *config.Config { return cfg }})
	sum, err := t.Query(p.Agent, from, to)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sum)
}

// offlineCronJobs reads data/cron/jobs.db read-only.
func offlineCronJobs(ctx context.Context, layout install.Layout) ([]api.CronJob, error) {
	jobs, err := store.ReadCronJobs(ctx, filepath.Join(layout.DataDir, "cron", "jobs.db"))
	if err != nil {
		return nil, fmt.Errorf("cron: list: %w", err)
	}
	out := make([]api.CronJob, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, cron.Wire(j))
	}
	return out, nil
}
