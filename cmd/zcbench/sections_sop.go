package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchSops: SOP runs of a 5-step auto SOP finished per second, each step a durable echo turn through the
// engine (its start and outcome committed to runs.db, the turn journaled to sessions.db), 4 runs in flight,
// beside a bare loop doing a run's own commits (start, 5 × step start and outcome, finish: 12 transactions
// with synchronous=FULL) on a copy of runs.db's schema.
func benchSops(b *bench) error {
	const sec, row = "sops", "5-step SOP runs, durable steps"
	in, err := newInstall(installOptions{})
	if err != nil {
		return err
	}
	defer in.remove()
	f, err := os.OpenFile(in.configPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("[sop]\nsops_dir = \"sops\"\nmax_concurrent_total = 8\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	dir := filepath.Join(in.root, "sops", "bench5")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	manifest := "[sop]\nname = \"bench5\"\ndescription = \"bench\"\nexecution_mode = \"auto\"\nmax_concurrent = 8\nagent = \"default\"\n\n[[triggers]]\ntype = \"manual\"\n"
	var md strings.Builder
	md.WriteString("## Steps\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&md, "%d. **Step %d** — Part %d.\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "SOP.toml"), []byte(manifest), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "SOP.md"), []byte(md.String()), 0o600); err != nil {
		return err
	}
	d, err := startDaemon(b.bin, in)
	if err != nil {
		return err
	}
	defer d.stop()
	c, _, err := dialInit(in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.call("sops/runs", map[string]any{}); err != nil {
		b.res.na(sec, row, "runs/s", noTarget(), "sops/runs: "+err.Error())
		return nil
	}
	const inFlight = 4
	total := b.n(60)
	started, finished := 0, 0
	active := map[string]bool{}
	start := time.Now()
	for finished < total {
		for started < total && len(active) < inFlight {
			var r struct {
				RunID string `json:"run_id"`
			}
			if err := c.callInto("sops/run", map[string]any{"name": "bench5"}, &r); err != nil {
				return err
			}
			active[r.RunID] = true
			started++
		}
		var runs struct {
			Runs []struct {
				RunID  string `json:"run_id"`
				Status string `json:"status"`
				Active bool   `json:"active"`
			} `json:"runs"`
		}
		if err := c.callInto("sops/runs", map[string]any{"sop": "bench5"}, &runs); err != nil {
			return err
		}
		for _, r := range runs.Runs {
			if active[r.RunID] && !r.Active {
				if r.Status != "completed" {
					return fmt.Errorf("bench run %s ended %s", r.RunID, r.Status)
				}
				delete(active, r.RunID)
				finished++
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	rate := float64(total) / time.Since(start).Seconds()
	schema, err := copySchema(b.ctx, filepath.Join(in.root, "data", "sop", "runs.db"))
	if err != nil {
		return err
	}
	bare, err := bareRunCommits(b.ctx, filepath.Join(b.tmp, fmt.Sprintf("bare-runs-%d.db", b.run)), schema, b.n(100))
	if err != nil {
		return err
	}
	b.res.addFloor(sec, row, "runs/s", noTarget(), rate, bare)
	b.res.note(sec, row, "daemon: 5 echo turns a run (each a session and its journal), 4 runs in flight; floor: the 12 runs.db commits of a run alone")
	return nil
}

// bareRunCommits does n runs' worth of runs.db writes (12 transactions each, ~1 KiB of JSON, synchronous=FULL
// as the engine writes) and returns runs/s.
func bareRunCommits(ctx context.Context, path string, schema []string, n int) (float64, error) {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range schema {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return 0, fmt.Errorf("bare schema %q: %w", s, err)
		}
	}
	js := `{"version":1,"run":{"step_results":[` + strings.Repeat(`{"step_number":1,"status":"completed","output":"done"},`, 15) + `{}]}}`
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("run-%d", i)
		for k := range 12 {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return 0, err
			}
			ts := time.Now().UTC().Format(time.RFC3339)
			if _, err := tx.ExecContext(ctx, `INSERT INTO sop_runs (run_id, revision, terminal, last_progress_at, json) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT(run_id) DO UPDATE SET revision=excluded.revision, terminal=excluded.terminal, json=excluded.json`,
				id, k+1, btoi(k == 11), ts, js); err != nil {
				tx.Rollback()
				return 0, err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO sop_events (run_id, ts, kind, payload) VALUES (?, ?, 'step', '{}')`, id, ts); err != nil {
				tx.Rollback()
				return 0, err
			}
			if err := tx.Commit(); err != nil {
				return 0, err
			}
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
