package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// chaosSop is the SOP the chaos run starts: 5 auto steps (echo turns), each retried after an interruption.
const chaosSop = "chaos5"

// writeChaosSop writes <install>/sops/chaos5 (the config's [sop] sops_dir is "sops").
func writeChaosSop(root string) error {
	dir := filepath.Join(root, "sops", chaosSop)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	manifest := "[sop]\nname = \"" + chaosSop + "\"\ndescription = \"chaos\"\nexecution_mode = \"auto\"\nmax_concurrent = 4\nagent = \"default\"\n\n[[triggers]]\ntype = \"manual\"\n"
	var md strings.Builder
	md.WriteString("## Steps\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&md, "%d. **Step %d** — Part %d.\n   - on_failure: retry:2\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "SOP.toml"), []byte(manifest), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "SOP.md"), []byte(md.String()), 0o600)
}

// sopWorker starts runs of chaos5 one after another; every run_id the daemon answered is acknowledged.
type sopWorker struct{ h *chaos }

func (sw *sopWorker) connect(*client) error { return nil }

func (sw *sopWorker) step(c *client) error {
	var r struct {
		RunID string `json:"run_id"`
	}
	if err := c.callInto("sops/run", map[string]any{"name": chaosSop}, &r); err != nil {
		return err
	}
	l := sw.h.led
	l.do(func() { l.sopRuns = append(l.sopRuns, r.RunID) })
	time.Sleep(150 * time.Millisecond)
	return nil
}

// sopRetention is [sop] max_finished_runs as the installs have it (the default): the engine deletes finished runs
// beyond the newest 100 by their last progress. sopSlack is how far that order may differ from the order the runs
// were acknowledged in: the chaos SOP's max_concurrent, runs that may finish out of order.
const sopRetention, sopSlack = 100, 4

// mayBePruned: the i-th of n acknowledged runs (oldest first) may be gone from runs.db by the retention, not lost.
// The newest sopRetention-sopSlack must all be there.
func mayBePruned(i, n int) bool { return n-i > sopRetention-sopSlack }

// checkSops: every acknowledged run ends (the daemon stays up while they finish) and is in runs.db terminal,
// with exactly one terminal event, and every step start in its ledger has exactly one outcome (completed,
// failed or interrupted), as many as the run's step results.
func (h *chaos) checkSops(c *client, acked []string) {
	before := len(h.violations)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var runs struct {
			Runs []struct {
				Active bool `json:"active"`
			} `json:"runs"`
		}
		if err := c.callInto("sops/runs", map[string]any{"sop": chaosSop}, &runs); err != nil {
			h.violate("sops/runs after the chaos: %v", err)
			return
		}
		active := 0
		for _, r := range runs.Runs {
			if r.Active {
				active++
			}
		}
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			h.violate("%d SOP runs still active a minute after the chaos", active)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	db, err := sql.Open("sqlite", filepath.Join(h.in.root, "data", "sop", "runs.db")+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		h.violate("runs.db: %v", err)
		return
	}
	defer db.Close()
	statuses := map[string]int{}
	interrupted := 0
	pruned := 0
	for i, id := range acked {
		var terminal int
		var js string
		if err := db.QueryRow(`SELECT terminal, json FROM sop_runs WHERE run_id=?`, id).Scan(&terminal, &js); err != nil {
			if errors.Is(err, sql.ErrNoRows) && mayBePruned(i, len(acked)) {
				pruned++ // the engine keeps only the newest finished runs ([sop] max_finished_runs)
				continue
			}
			h.violate("acknowledged SOP run %s not in runs.db: %v", id, err)
			continue
		}
		var env struct {
			Run struct {
				Status      string `json:"status"`
				StepResults []struct {
					Step int `json:"step_number"`
				} `json:"step_results"`
			} `json:"run"`
		}
		_ = json.Unmarshal([]byte(js), &env)
		statuses[env.Run.Status]++
		if terminal != 1 {
			h.violate("SOP run %s is %s, not terminal, after the chaos", id, env.Run.Status)
		}
		rows, err := db.Query(`SELECT kind, payload FROM sop_events WHERE run_id=? ORDER BY seq`, id)
		if err != nil {
			h.violate("SOP run %s events: %v", id, err)
			continue
		}
		ends := 0
		starts, outcomes := map[int]int{}, map[int]int{}
		for rows.Next() {
			var kind, payload string
			_ = rows.Scan(&kind, &payload)
			var p struct {
				Step int `json:"step"`
			}
			_ = json.Unmarshal([]byte(payload), &p)
			switch kind {
			case "run_completed", "run_failed", "run_cancelled":
				ends++
			case "step_started":
				starts[p.Step]++
			case "step_interrupted":
				interrupted++
				outcomes[p.Step]++
			case "step_completed", "step_failed":
				outcomes[p.Step]++
			}
		}
		rows.Close()
		if ends != 1 {
			h.violate("SOP run %s has %d terminal events, want 1", id, ends)
		}
		results := map[int]int{}
		for _, r := range env.Run.StepResults {
			results[r.Step]++
		}
		for step := 1; step <= 5; step++ {
			if starts[step] != outcomes[step] || outcomes[step] != results[step] {
				h.violate("SOP run %s step %d: %d starts, %d outcomes, %d results", id, step, starts[step], outcomes[step], results[step])
			}
		}
	}
	if len(h.violations) == before {
		h.pass("every acknowledged SOP run ended exactly once, every step start has one outcome (%d runs: %v; %d interrupted steps marked; %d older runs pruned by the retention)",
			len(acked), statuses, interrupted, pruned)
	}
}
