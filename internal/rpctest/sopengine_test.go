package rpctest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

// writeSop writes <install>/shared/sops/<name>/SOP.toml and SOP.md.
func writeSop(t *testing.T, installDir, name, toml, md string) {
	t.Helper()
	dir := filepath.Join(installDir, "shared", "sops", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SOP.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SOP.md"), []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
}

const sopSection = "\n[sop]\nsops_dir = \"shared/sops\"\n"

func sopManifest(name, mode string) string {
	return fmt.Sprintf("[sop]\nname = %q\ndescription = \"test\"\nexecution_mode = %q\nagent = \"a\"\n\n[[triggers]]\ntype = \"manual\"\n", name, mode)
}

// waitRun polls sops/run-get until the run reaches one of want.
func waitRun(t *testing.T, c *rc, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last map[string]any
	for time.Now().Before(deadline) {
		raw, werr := c.call(api.MethodSopsRunGet, map[string]any{"run_id": id})
		if werr == nil {
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			if r, ok := m["run"].(map[string]any); ok {
				m = r
			}
			last = m
			for _, w := range want {
				if m["status"] == w {
					return m
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("run %s never reached %v: last %v", id, want, last)
	return nil
}

func startRun(t *testing.T, c *rc, name, payload string) string {
	t.Helper()
	params := map[string]any{"name": name}
	if payload != "" {
		params["payload"] = payload
	}
	var res struct {
		RunID string `json:"run_id"`
	}
	c.mustCall(api.MethodSopsRun, params, &res)
	if res.RunID == "" {
		t.Fatalf("sops/run gave no run_id")
	}
	return res.RunID
}

// A SOP under <install>/shared/sops loads at start (upstream #6534), sops/run's run is driven to completed
// through the agent's turn path (upstream #10513, #9841: every step executed, not just logged), each step's
// start and outcome are in runs.db with upstream's schema, and status reports the durable store.
func TestSopRunDrivenToCompletion(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", sopSection)))
	writeSop(t, d.ConfigDir, "hello", sopManifest("hello", "auto"),
		"## Steps\n1. **Greet** — Say hello.\n2. **Wave** — Wave goodbye.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	var st api.StatusResult
	c.mustCall(api.MethodStatus, struct{}{}, &st)
	runsDB := filepath.Join(d.ConfigDir, "data", "sop", "runs.db")
	if st.Sop == nil || !st.Sop.Durable || st.Sop.Store != "sqlite" || st.Sop.Path != runsDB || st.Sop.Loaded != 1 {
		t.Fatalf("status.sop = %+v, want sqlite at %s with 1 SOP", st.Sop, runsDB)
	}
	id := startRun(t, c, "hello", `{"who":"world"}`)
	run := waitRun(t, c, id, "completed", "failed", "cancelled")
	if run["status"] != "completed" {
		t.Fatalf("run = %v", run)
	}
	results, _ := run["step_results"].([]any)
	if len(results) != 2 {
		t.Fatalf("step_results = %v", results)
	}
	first := results[0].(map[string]any)
	// The echo provider repeats the step context: the step really went through a model turn.
	if out, _ := first["output"].(string); !strings.Contains(out, "[SOP: hello (run "+id+") — Step 1 of 2]") || !strings.Contains(out, `"who":"world"`) {
		t.Fatalf("step 1 output %q", out)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", runsDB+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var terminal int
	var js string
	if err := db.QueryRow(`SELECT terminal, json FROM sop_runs WHERE run_id=?`, id).Scan(&terminal, &js); err != nil || terminal != 1 ||
		!strings.Contains(js, `"version":1`) {
		t.Fatalf("runs.db row: terminal=%d json=%.200s err=%v", terminal, js, err)
	}
	rows, err := db.Query(`SELECT kind FROM sop_events WHERE run_id=? ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for rows.Next() {
		var k string
		_ = rows.Scan(&k)
		kinds = append(kinds, k)
	}
	rows.Close()
	if strings.Join(kinds, ",") != "run_started,step_started,step_completed,step_started,step_completed,run_completed" {
		t.Fatalf("ledger = %v", kinds)
	}
}

// A headless step runs under its agent's risk profile with nobody to approve: a tool call the profile would ask
// about is refused, not run (upstream #9841's review: headless steps had no ApprovalManager).
func TestSopHeadlessStepRefusesWhatTheProfileWouldAsk(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(ShortTempDir(t), "ran")
	srv := newLLM(t,
		stream(ctSSE, openAIToolCall("shell", fmt.Sprintf(`{"command":"touch %s"}`, marker))),
		stream(ctSSE, openAIText(1, 1, "done")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "supervised", sopSection)))
	writeSop(t, d.ConfigDir, "ops", sopManifest("ops", "auto"), "## Steps\n1. **Touch** — Create the marker.\n   - tools: shell\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	id := startRun(t, c, "ops", "")
	run := waitRun(t, c, id, "completed", "failed", "cancelled")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the shell call ran in a headless step without approval")
	}
	_, bodies := srv.requests()
	if len(bodies) < 2 || !strings.Contains(strings.ToLower(string(bodies[1])), "approv") {
		t.Fatalf("the model was not told the call was refused: %d requests, last %.400s", len(bodies), bodies[len(bodies)-1])
	}
	if run["status"] == "running" {
		t.Fatalf("run %v", run)
	}
}

// A supervised SOP waits at step 1; sops/advance-style shortcuts do not pass the gate (#8678); an approval from
// a client resumes it and the run finishes; the failure reason of a denied run is stored and shown (#9783).
func TestSopGateApproveAndDeny(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", sopSection)))
	writeSop(t, d.ConfigDir, "gated", sopManifest("gated", "supervised"), "## Steps\n1. **Plan** — Plan.\n2. **Do** — Do it.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	id := startRun(t, c, "gated", "")
	waiting := waitRun(t, c, id, "waiting_approval")
	gate, _ := waiting["gate"].(map[string]any)
	if gate == nil || gate["step"] != float64(1) || gate["revision"] != float64(0) {
		t.Fatalf("gate shown %v", waiting["gate"])
	}
	// An answer bound to another gate than the one shown resolves nothing.
	_, werr := c.call(api.MethodSopsDecide, map[string]any{"name": "gated", "run_id": id, "decision": "approve", "step": 2, "gate_revision": 0})
	wantErr(t, "decide on a gate not shown", werr, -32602, "waits at step 1 revision 0", "another gate")
	if r := waitRun(t, c, id, "waiting_approval"); r["status"] != "waiting_approval" {
		t.Fatalf("a refused answer moved the run: %v", r)
	}
	c.mustCall(api.MethodSopsDecide, map[string]any{"name": "gated", "run_id": id, "decision": "approve", "step": 1, "gate_revision": 0}, nil)
	run := waitRun(t, c, id, "completed")
	if n := len(run["step_results"].([]any)); n != 2 {
		t.Fatalf("results %d", n)
	}
	id2 := startRun(t, c, "gated", "")
	waitRun(t, c, id2, "waiting_approval")
	c.mustCall(api.MethodSopsDecide, map[string]any{"name": "gated", "run_id": id2, "decision": map[string]any{"deny": map[string]any{"reason": "not now"}}}, nil)
	run = waitRun(t, c, id2, "cancelled")
	if run["failure_reason"] != "not now" || len(run["step_results"].([]any)) != 0 {
		t.Fatalf("denied run %v", run)
	}
}

// runs.db that cannot be opened leaves runs in memory, loudly: status.sop.warning and a doctor error; the daemon
// still serves and runs SOPs.
func TestSopStoreFallbackIsLoud(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", sopSection+"run_state_dir = \"blocked\"\n")))
	writeSop(t, d.ConfigDir, "hello", sopManifest("hello", "auto"), "## Steps\n1. **Greet** — Hi.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	// A file where the run state directory should be: runs.db cannot be opened.
	if err := os.RemoveAll(filepath.Join(d.ConfigDir, "blocked")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.ConfigDir, "blocked"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	var st api.StatusResult
	c.mustCall(api.MethodStatus, struct{}{}, &st)
	if st.Sop == nil || st.Sop.Durable || st.Sop.Store != "memory" || st.Sop.Warning == "" {
		t.Fatalf("status.sop = %+v, want memory with a warning", st.Sop)
	}
	var doc api.DoctorResult
	c.mustCall(api.MethodDoctorRun, map[string]any{"offline": true}, &doc)
	found := false
	for _, r := range doc.Results {
		if r.ID == "sop-runs-in-memory" && r.Severity == api.SeverityError {
			found = true
		}
	}
	if !found {
		t.Fatalf("doctor did not report the memory fallback: %+v", doc.Results)
	}
	id := startRun(t, c, "hello", "")
	waitRun(t, c, id, "completed")
}

// Changed SOP files are picked up while the daemon runs; a run that was waiting keeps the definition it
// started with (2 steps), a new run gets the edited one (3 steps).
func TestSopReloadKeepsRunningRevision(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", sopSection)))
	writeSop(t, d.ConfigDir, "gated", sopManifest("gated", "supervised"), "## Steps\n1. **Plan** — Plan.\n2. **Do** — Do it.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	old := startRun(t, c, "gated", "")
	waitRun(t, c, old, "waiting_approval")
	writeSop(t, d.ConfigDir, "gated", sopManifest("gated", "supervised"), "## Steps\n1. **Plan** — Plan.\n2. **Do** — Do it.\n3. **Check** — Check it.\n")
	writeSop(t, d.ConfigDir, "later", sopManifest("later", "auto"), "## Steps\n1. **One** — One.\n")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, werr := c.call(api.MethodSopsRun, map[string]any{"name": "later"}); werr == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a SOP added to sops_dir was never loaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.mustCall(api.MethodSopsDecide, map[string]any{"name": "gated", "run_id": old, "decision": "approve"}, nil)
	run := waitRun(t, c, old, "completed")
	if run["total_steps"] != float64(2) || len(run["step_results"].([]any)) != 2 {
		t.Fatalf("the waiting run changed definition: %v", run)
	}
	var ov struct {
		Nodes []map[string]any `json:"nodes"`
	}
	c.mustCall(api.MethodSopsRunOverlay, map[string]any{"name": "gated", "run_id": old}, &ov)
	if len(ov.Nodes) != 2 {
		t.Fatalf("the finished run's overlay shows %d steps, want the 2 it ran", len(ov.Nodes))
	}
	fresh := startRun(t, c, "gated", "")
	run = waitRun(t, c, fresh, "waiting_approval")
	if run["total_steps"] != float64(3) {
		t.Fatalf("a new run did not get the edited SOP: %v", run)
	}
}

// A cron trigger fires through the scheduler's schedule rules at its window, once, and the run is driven.
func TestSopCronTrigger(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 6, 1, 8, 0, 30, 0, time.Local))
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", sopSection)), WithClock(clk))
	writeSop(t, d.ConfigDir, "tick", "[sop]\nname = \"tick\"\ndescription = \"every five minutes\"\nexecution_mode = \"auto\"\nagent = \"a\"\n\n[[triggers]]\ntype = \"cron\"\nexpression = \"*/5 * * * *\"\n",
		"## Steps\n1. **Tick** — Note the time.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir, WithClock(clk))
	c := dialRC(t, d, "")
	runs := func() []map[string]any {
		var res struct {
			Runs []map[string]any `json:"runs"`
		}
		c.mustCall(api.MethodSopsRuns, map[string]any{"sop": "tick"}, &res)
		return res.Runs
	}
	if !clk.WaitTimer(4*time.Minute+30*time.Second, 10*time.Second) {
		t.Fatal("no timer armed for the 08:05 window")
	}
	if n := len(runs()); n != 0 {
		t.Fatalf("%d runs before the window", n)
	}
	clk.Advance(4*time.Minute + 30*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for {
		rs := runs()
		if len(rs) == 1 && rs[0]["status"] == "completed" {
			if rs[0]["trigger_source"] != "cron" {
				t.Fatalf("run %v", rs[0])
			}
			break
		}
		if len(rs) > 1 || time.Now().After(deadline) {
			t.Fatalf("runs after one window: %v", rs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
