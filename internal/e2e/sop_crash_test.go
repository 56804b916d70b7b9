package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// sopBackend is an OpenAI-compatible model that answers SOP step turns at once and counts them per (run,
// step), read from the step context; when stall is set, the next step turn it sees blocks (until its client
// goes away) and is announced on stalled, so a test can kill the daemon while that step is in flight.
type sopBackend struct {
	mu      sync.Mutex
	turns   map[string]int // "run/step" -> model requests seen
	stall   atomic.Bool
	stalled chan string
	seen    atomic.Int64
}

var stepHeader = regexp.MustCompile(`\[SOP: [a-z]+ \(run ([A-Za-z0-9-]+)\) — Step (\d+) of \d+\]`)

func newSopBackend(t *testing.T) (*sopBackend, string) {
	b := &sopBackend{turns: map[string]int{}, stalled: make(chan string, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := stepHeader.FindSubmatch(body)
		key := "?"
		if m != nil {
			key = string(m[1]) + "/" + string(m[2])
		}
		b.mu.Lock()
		b.turns[key]++
		b.mu.Unlock()
		b.seen.Add(1)
		if b.stall.CompareAndSwap(true, false) {
			select {
			case b.stalled <- key:
			default:
			}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("done "+key))
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return b, srv.URL
}

func (b *sopBackend) count(run string, step int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.turns[fmt.Sprintf("%s/%d", run, step)]
}

// sopSteps is a SOP.md of n steps, each with onFailure ("" for the default, fail).
func sopSteps(n int, onFailure string) string {
	var b strings.Builder
	b.WriteString("## Steps\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d. **Step %d** — Do part %d.\n", i, i, i)
		if onFailure != "" {
			fmt.Fprintf(&b, "   - on_failure: %s\n", onFailure)
		}
	}
	return b.String()
}

func writeSopDir(t *testing.T, root, name, manifest, md string) {
	t.Helper()
	dir := filepath.Join(root, "sops", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for f, body := range map[string]string{"SOP.toml": manifest, "SOP.md": md} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// kill -9 at every kind of step boundary, 100 rounds, on the real binary: while a step's turn is in flight, a
// random moment after a start, right after a step's outcome, and during the restore itself. Afterwards every
// run the daemon acknowledged exists and ended exactly once; every step start has exactly one outcome; no
// step turn happened without its start committed first; and a step that ran twice was marked interrupted
// in between (nothing is run again silently).
func TestSopKill9AtStepBoundaries(t *testing.T) {
	t.Parallel()
	const rounds = 100
	be, url := newSopBackend(t)
	h, root := homeWithOpenAI(t, "fake", url)
	appendFile(t, filepath.Join(root, "config.toml"), "\n[sop]\nsops_dir = \"sops\"\nmax_concurrent_total = 8\n")
	manifest := func(name string) string {
		return fmt.Sprintf("[sop]\nname = %q\ndescription = \"crash test\"\nexecution_mode = \"auto\"\nmax_concurrent = 8\n\n[[triggers]]\ntype = \"manual\"\n", name)
	}
	writeSopDir(t, root, "five", manifest("five"), sopSteps(5, "retry:2"))
	writeSopDir(t, root, "strict", manifest("strict"), sopSteps(5, ""))
	sock := filepath.Join(root, "data", "daemon.sock")
	rng := rand.New(rand.NewPCG(24, uint64(time.Now().UnixNano())))
	var acked []string
	for round := range rounds {
		d := start(t, env(h), "daemon")
		waitSocket(t, d, sock)
		mode := round % 4
		if mode == 3 { // during restore: the restored drivers are just starting
			signal(t, d, syscall.SIGKILL)
			d.wait(t, 10*time.Second)
			continue
		}
		c := dialStream(t, sock)
		name := "five"
		if round%5 == 0 {
			name = "strict"
		}
		if mode == 0 {
			be.stall.Store(true)
		}
		before := be.seen.Load()
		c.Request("sops/run", map[string]any{"name": name}, 2)
		m := c.Next()
		if res, ok := m["result"].(map[string]any); ok {
			if id, _ := res["run_id"].(string); id != "" {
				acked = append(acked, id)
			}
		}
		switch mode {
		case 0: // a step turn in flight
			select {
			case <-be.stalled:
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: no step turn reached the model", round)
			}
		case 1: // a random moment
			time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		case 2: // right after k more step turns answered: at an outcome's commit or the next start
			k := int64(1 + rng.IntN(3))
			deadline := time.Now().Add(10 * time.Second)
			for be.seen.Load() < before+k && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		be.stall.Store(false)
		signal(t, d, syscall.SIGKILL)
		d.wait(t, 10*time.Second)
		_ = c.Conn().Close()
	}
	if len(acked) < rounds/2 {
		t.Fatalf("only %d runs acknowledged in %d rounds", len(acked), rounds)
	}

	// Let everything finish, then stop cleanly and read runs.db.
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	deadline := time.Now().Add(60 * time.Second)
	for {
		c.Request("sops/runs", map[string]any{}, 3)
		res := c.Result(3)
		active := 0
		for _, r := range res["runs"].([]any) {
			if r.(map[string]any)["active"] == true {
				active++
			}
		}
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs still active after the last restart", active)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.Conn().Close()
	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("clean stop exited %d", code)
	}

	db, err := sql.Open("sqlite", filepath.Join(root, "data", "sop", "runs.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sop_runs`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored < len(acked) {
		t.Fatalf("%d runs acknowledged, %d in runs.db", len(acked), stored)
	}
	interruptedTotal, terminalCounts := 0, map[string]int{}
	for _, id := range acked {
		var terminal int
		var js string
		if err := db.QueryRow(`SELECT terminal, json FROM sop_runs WHERE run_id=?`, id).Scan(&terminal, &js); err != nil {
			t.Fatalf("acknowledged run %s lost: %v", id, err)
		}
		var env struct {
			Run struct {
				Status      string `json:"status"`
				StepResults []struct {
					Step   int    `json:"step_number"`
					Status string `json:"status"`
				} `json:"step_results"`
			} `json:"run"`
		}
		if err := json.Unmarshal([]byte(js), &env); err != nil {
			t.Fatal(err)
		}
		st := env.Run.Status
		if terminal != 1 || (st != "completed" && st != "failed" && st != "cancelled") {
			t.Fatalf("run %s: terminal=%d status %s", id, terminal, st)
		}
		terminalCounts[st]++
		rows, err := db.Query(`SELECT kind, payload FROM sop_events WHERE run_id=? ORDER BY seq`, id)
		if err != nil {
			t.Fatal(err)
		}
		ends := 0
		starts, outcomes, interrupted := map[int]int{}, map[int]int{}, map[int]int{}
		for rows.Next() {
			var kind, payload string
			if err := rows.Scan(&kind, &payload); err != nil {
				t.Fatal(err)
			}
			var p struct {
				Step int `json:"step"`
			}
			_ = json.Unmarshal([]byte(payload), &p)
			switch kind {
			case "run_completed", "run_failed", "run_cancelled":
				ends++
			case "step_started":
				starts[p.Step]++
			case "step_completed", "step_failed":
				outcomes[p.Step]++
			case "step_interrupted":
				outcomes[p.Step]++
				interrupted[p.Step]++
			}
		}
		rows.Close()
		if ends != 1 {
			t.Errorf("run %s: %d terminal events, want exactly 1", id, ends)
		}
		results := map[int]int{}
		for _, r := range env.Run.StepResults {
			results[r.Step]++
		}
		for step := 1; step <= 5; step++ {
			turns := be.count(id, step)
			if starts[step] != outcomes[step] || outcomes[step] != results[step] {
				t.Errorf("run %s step %d: %d starts, %d outcomes in the ledger, %d results in the run", id, step, starts[step], outcomes[step], results[step])
			}
			if turns > starts[step] {
				t.Errorf("run %s step %d: %d model turns but %d committed starts", id, step, turns, starts[step])
			}
			if turns > 1 && interrupted[step] < turns-1 {
				t.Errorf("run %s step %d ran %d times with only %d interruptions marked", id, step, turns, interrupted[step])
			}
			interruptedTotal += interrupted[step]
		}
	}
	if interruptedTotal == 0 {
		t.Fatal("no step was ever interrupted: the kills missed every step")
	}
	t.Logf("%d rounds, %d runs acknowledged: %v; %d step interruptions marked", rounds, len(acked), terminalCounts, interruptedTotal)
}

// kill -9 while a run waits at its gate: after the restart the run still waits at the same gate, a second
// client approves it, and it finishes, each step turned once.
func TestSopKill9WhileWaitingThenApprove(t *testing.T) {
	t.Parallel()
	be, url := newSopBackend(t)
	h, root := homeWithOpenAI(t, "fake", url)
	appendFile(t, filepath.Join(root, "config.toml"), "\n[sop]\nsops_dir = \"sops\"\n")
	writeSopDir(t, root, "gated", "[sop]\nname = \"gated\"\ndescription = \"waits\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n", sopSteps(3, ""))
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("sops/run", map[string]any{"name": "gated"}, 2)
	id, _ := c.Result(2)["run_id"].(string)
	waitStatus := func(c interface {
		Request(string, any, any)
		Result(any) map[string]any
	}, want string) map[string]any {
		deadline := time.Now().Add(20 * time.Second)
		for {
			c.Request("sops/run-get", map[string]any{"run_id": id}, 9)
			res := c.Result(9)
			run, _ := res["run"].(map[string]any)
			if run == nil {
				run = res
			}
			if run["status"] == want {
				return run
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s: %v, want %s", id, run["status"], want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitStatus(c, "waiting_approval")
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	watcher := dialStream(t, sock)
	run := waitStatus(watcher, "waiting_approval")
	gate, _ := run["gate"].(map[string]any)
	if gate == nil || gate["step"] != float64(1) {
		t.Fatalf("restored gate %v", run["gate"])
	}
	approver := dialStream(t, sock)
	approver.Request("sops/decide", map[string]any{"name": "gated", "run_id": id, "decision": "approve"}, 3)
	approver.Result(3)
	run = waitStatus(watcher, "completed")
	if n := len(run["step_results"].([]any)); n != 3 {
		t.Fatalf("results %d", n)
	}
	for step := 1; step <= 3; step++ {
		if n := be.count(id, step); n != 1 {
			t.Errorf("step %d turned %d times", step, n)
		}
	}
}
