package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // reads and writes jobs.db and control_plane.db as another program would

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// cronConfig: the echo agent, shell auto-approved (scheduled shell jobs run unattended), 5 s ticks.
const cronConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "jobs"

[risk_profiles.jobs]
level = "supervised"
workspace_only = true
auto_approve = ["shell"]

[reliability]
scheduler_poll_secs = 5
`

// cronHome is a fresh HOME whose install runs cronConfig; it returns the HOME and the install root.
func cronHome(t *testing.T) (string, string) {
	t.Helper()
	return homeWithConfig(t, cronConfig)
}

func workspaceOf(root string) string { return filepath.Join(root, "agents", "default", "workspace") }

// rpcResult calls method and returns its result, failing the test on an error.
func rpcResult(t *testing.T, c *ndjson.Client, id int, method string, params any) map[string]any {
	t.Helper()
	r := c.Call(method, params, id)
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("%s: %v", method, r)
	}
	return res
}

func cronClient(t *testing.T, sock string) *ndjson.Client {
	t.Helper()
	c := dialRPC(t, sock)
	c.Initialize()
	return c
}

func cronRuns(t *testing.T, c *ndjson.Client, id int, job string) []map[string]any {
	t.Helper()
	res := rpcResult(t, c, id, "cron/runs", map[string]any{"id": job, "limit": 50})
	var out []map[string]any
	for _, r := range res["runs"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

// eventually polls cond every 50 ms until it holds, failing after guard (a bound on a hung test).
func eventually(t *testing.T, guard time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, guard)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// A one-shot job that fell due while the daemon was stopped runs once when it starts again; the CLI shows it.
func TestCronJobDueWhileDownRunsOnceAfterStart(t *testing.T) {
	t.Parallel()
	h, root := cronHome(t)
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := cronClient(t, sock)
	due := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	job := rpcResult(t, c, 2, "cron/add", map[string]any{"agent": "default", "name": "catch-up",
		"schedule": map[string]any{"kind": "at", "at": due}, "command": "echo ran >> catchup.log", "delete_after_run": false})
	id := job["id"].(string)
	if _, stderr, code := run(t, env(h), "", "stop"); code != 0 {
		t.Fatalf("stop: %s", stderr)
	}
	d.wait(t, 15*time.Second)
	time.Sleep(time.Until(mustTime(t, due)) + 200*time.Millisecond) // the job falls due while nothing runs
	if n := lines(filepath.Join(workspaceOf(root), "catchup.log")); n != 0 {
		t.Fatalf("the job ran while the daemon was down (%d)", n)
	}

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	log := filepath.Join(workspaceOf(root), "catchup.log")
	eventually(t, 20*time.Second, "catch-up run", func() bool { return lines(log) >= 1 })
	// Past the next tick (5 s) it has still run once.
	time.Sleep(6 * time.Second)
	if n := lines(log); n != 1 {
		t.Fatalf("the overdue job ran %d times, want once", n)
	}
	out, stderr, code := run(t, env(h), "", "cron", "runs", id)
	if code != 0 || !strings.Contains(out, "ok") || strings.Count(out, "\n") != 2 {
		t.Fatalf("cron runs: %q %q", out, stderr)
	}
	out, _, _ = run(t, env(h), "", "cron", "list")
	if !strings.Contains(out, id) || !strings.Contains(out, "catch-up") || !strings.Contains(out, "false") {
		t.Fatalf("cron list: the one-shot is kept, disabled: %q", out)
	}

	// The rest of the CLI on the same daemon.
	out, stderr, code = run(t, env(h), "", "cron", "add", "--every", "1h", "--command", "echo from the cli", "--name", "cli")
	if code != 0 || !strings.Contains(out, "added job ") {
		t.Fatalf("cron add: %q %q", out, stderr)
	}
	cliID := strings.Fields(strings.TrimPrefix(out, "added job "))[0]
	out, stderr, code = run(t, env(h), "", "cron", "trigger", cliID)
	if code != 0 || !strings.Contains(out, "from the cli") {
		t.Fatalf("cron trigger: %q %q", out, stderr)
	}
	if _, stderr, code = run(t, env(h), "", "cron", "add", "--every", "1h", "--command", "rm -rf /"); code == 0 || !strings.Contains(stderr, "blocked command") {
		t.Fatalf("cron add of a blocked command: %d %q", code, stderr)
	}
	if out, _, code = run(t, env(h), "", "cron", "remove", cliID); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("cron remove: %q", out)
	}
	if _, stderr, code = run(t, env(h), "", "cron", "remove", cliID); code == 0 || !strings.Contains(stderr, "not found") {
		t.Fatalf("cron remove twice: %q", stderr)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var (
	shareOnce   sync.Once
	shareBinary string
	shareErr    error
)

// sharingBinary builds zeroclaw with the zeroclaw_e2e tag, the only build that lets a second daemon share an
// install (ZEROCLAW_E2E_SHARE_INSTALL=1).
func sharingBinary(t *testing.T) string {
	t.Helper()
	shareOnce.Do(func() {
		shareBinary = filepath.Join(filepath.Dir(binary), "zeroclaw-share")
		out, err := exec.Command("go", "build", "-tags", "zeroclaw_e2e", "-o", shareBinary, "../../cmd/zeroclaw").CombinedOutput()
		if err != nil {
			shareErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if shareErr != nil {
		t.Fatal(shareErr)
	}
	return shareBinary
}

// Two daemons (two processes, test-only build) on one install wake at the same due time and race for 20 jobs:
// each runs exactly once.
func TestCronTwoSchedulersClaimEachJobOnce(t *testing.T) {
	t.Parallel()
	h, root := cronHome(t)
	bin := sharingBinary(t)
	sockA, sockB := filepath.Join(root, "data", "a.sock"), filepath.Join(root, "data", "b.sock")
	startWith := func(sock string) *proc {
		cmd := exec.Command(bin, "daemon")
		cmd.Env = env(h, "ZEROCLAW_SOCKET="+sock, "ZEROCLAW_E2E_SHARE_INSTALL=1")
		return startCmd(t, cmd, "daemon on "+sock)
	}
	// The production binary ignores the test-only variable: a second one on the install is refused.
	prod := start(t, env(h, "ZEROCLAW_SOCKET="+sockA), "daemon")
	waitSocket(t, prod, sockA)
	if _, stderr, code := run(t, env(h, "ZEROCLAW_SOCKET="+sockB, "ZEROCLAW_E2E_SHARE_INSTALL=1"), "", "daemon"); code == 0 || !strings.Contains(stderr, "another daemon") {
		t.Fatalf("a production daemon shared the install: %d %q", code, stderr)
	}
	signal(t, prod, syscall.SIGTERM)
	prod.wait(t, 15*time.Second)

	a := startWith(sockA)
	waitSocket(t, a, sockA)
	c := cronClient(t, sockA)
	due := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339Nano)
	var ids []string
	for i := range 20 {
		job := rpcResult(t, c, 10+i, "cron/add", map[string]any{"agent": "default", "schedule": map[string]any{"kind": "at", "at": due},
			"command": fmt.Sprintf("echo ran >> race-%d.log", i), "delete_after_run": false})
		ids = append(ids, job["id"].(string))
	}
	b := startWith(sockB)
	waitSocket(t, b, sockB)
	cb := cronClient(t, sockB)
	if got := rpcResult(t, cb, 2, "cron/list", map[string]any{}); len(got["jobs"].([]any)) != 20 {
		t.Fatalf("daemon B sees %d jobs", len(got["jobs"].([]any)))
	}
	eventually(t, 30*time.Second, "all 20 jobs ran", func() bool {
		for i := range 20 {
			if lines(filepath.Join(workspaceOf(root), fmt.Sprintf("race-%d.log", i))) == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(6 * time.Second) // both schedulers tick again
	for i, id := range ids {
		if n := lines(filepath.Join(workspaceOf(root), fmt.Sprintf("race-%d.log", i))); n != 1 {
			t.Errorf("job %d ran %d times", i, n)
		}
		if runs := cronRuns(t, c, 100+i, id); len(runs) != 1 || runs[0]["status"] != "ok" {
			t.Errorf("job %d runs %v", i, runs)
		}
	}
	t.Logf("runs by daemon A: %d, by daemon B: %d", strings.Count(a.stderr.String(), `msg="job ran"`), strings.Count(b.stderr.String(), `msg="job ran"`))
}

// kill -9 during a run: after the restart the run and its control-plane task are lost, and the job runs again
// at its next due time.
func TestCronKill9MidRunIsLost(t *testing.T) {
	t.Parallel()
	h, root := cronHome(t)
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := cronClient(t, sock)
	ws := workspaceOf(root)
	// The first run hangs; later runs finish at once. (No exec or $ expansions: the profile asks about those every time.)
	job := rpcResult(t, c, 2, "cron/add", map[string]any{"agent": "default", "schedule": map[string]any{"kind": "every", "every_ms": 2000},
		"command": "if test -e started; then echo second run; else touch started; sleep 120; fi"})
	id := job["id"].(string)
	eventually(t, 20*time.Second, "first run started", func() bool { _, err := os.Stat(filepath.Join(ws, "started")); return err == nil })
	t.Cleanup(func() { killIn(ws) })
	runs := cronRuns(t, c, 3, id)
	if len(runs) != 1 || runs[0]["status"] != "running" {
		t.Fatalf("runs during the first run: %v", runs)
	}
	runID := int64(runs[0]["id"].(float64))
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c = cronClient(t, sock)
	var all []map[string]any
	eventually(t, 20*time.Second, "second run", func() bool {
		all = cronRuns(t, c, 4, id)
		return len(all) >= 2 && all[0]["status"] == "ok"
	})
	var lost map[string]any
	for _, r := range all {
		if int64(r["id"].(float64)) == runID {
			lost = r
		}
	}
	if lost == nil || lost["status"] != "lost" || !strings.Contains(lost["output"].(string), "lost") {
		t.Fatalf("the killed run: %v (all %v)", lost, all)
	}
	if !strings.Contains(all[0]["output"].(string), "second run") {
		t.Fatalf("the next run: %v", all[0])
	}
	// Its control-plane task is lost too.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(root, "data", "control_plane.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status string
	ref := fmt.Sprintf("cron:%s#%d", id, runID)
	if err := db.QueryRow("SELECT status FROM tasks WHERE idem_key = ?", ref).Scan(&status); err != nil || status != "lost" {
		t.Fatalf("task of the killed run (%s): %q, %v", ref, status, err)
	}
	var okTasks int
	_ = db.QueryRow("SELECT COUNT(*) FROM tasks WHERE kind = 'cron' AND status = 'completed'").Scan(&okTasks)
	if okTasks < 1 {
		t.Fatal("the next run has no completed task")
	}
}

// A jobs.db written by upstream (its DDL and rows as its code writes them) is read, listed and run; a row with a
// command the agent's profile refuses is recorded as failed.
func TestCronUpstreamJobsDB(t *testing.T) {
	t.Parallel()
	h, root := cronHome(t)
	dbPath := filepath.Join(root, "data", "cron", "jobs.db")
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000000000+00:00")
	created := time.Now().Add(-48 * time.Hour).UTC().Format("2006-01-02T15:04:05.123456789+00:00")
	future := time.Now().Add(24 * time.Hour).UTC().Format("2006-01-02T15:04:05+00:00")
	delivery := `{"mode":"none","channel":null,"to":null,"best_effort":true}`
	stmts := []string{
		// upstream's initialize_schema: the base table, then its ALTERs in order.
		`CREATE TABLE IF NOT EXISTS cron_jobs (id TEXT PRIMARY KEY, expression TEXT NOT NULL, command TEXT NOT NULL,
			schedule TEXT, job_type TEXT NOT NULL DEFAULT 'shell', prompt TEXT, name TEXT,
			session_target TEXT NOT NULL DEFAULT 'isolated', model TEXT, enabled INTEGER NOT NULL DEFAULT 1, delivery TEXT,
			delete_after_run INTEGER NOT NULL DEFAULT 0, allowed_tools TEXT, created_at TEXT NOT NULL, next_run TEXT NOT NULL,
			last_run TEXT, last_status TEXT, last_output TEXT)`,
		`CREATE INDEX IF NOT EXISTS idx_cron_jobs_next_run ON cron_jobs(next_run)`,
		`CREATE TABLE IF NOT EXISTS cron_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL,
			started_at TEXT NOT NULL, finished_at TEXT NOT NULL, status TEXT NOT NULL, output TEXT, duration_ms INTEGER,
			FOREIGN KEY (job_id) REFERENCES cron_jobs(id) ON DELETE CASCADE)`,
		`CREATE INDEX IF NOT EXISTS idx_cron_runs_job_id ON cron_runs(job_id)`,
		`CREATE INDEX IF NOT EXISTS idx_cron_runs_started_at ON cron_runs(started_at)`,
		`CREATE INDEX IF NOT EXISTS idx_cron_runs_job_started ON cron_runs(job_id, started_at)`,
		`ALTER TABLE cron_jobs ADD COLUMN source TEXT DEFAULT 'imperative'`,
		`ALTER TABLE cron_jobs ADD COLUMN uses_memory INTEGER NOT NULL DEFAULT 1`,
		`ALTER TABLE cron_jobs ADD COLUMN agent_alias TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE cron_jobs ADD COLUMN locked_at TEXT`,
		`ALTER TABLE cron_jobs ADD COLUMN shell_output_format TEXT NOT NULL DEFAULT 'wrapped'`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	insert := `INSERT INTO cron_jobs (id, expression, command, schedule, job_type, prompt, name, session_target, model,
		enabled, delivery, delete_after_run, agent_alias, created_at, next_run, shell_output_format)
		VALUES (?, ?, ?, ?, 'shell', NULL, ?, 'isolated', NULL, 1, ?, 0, ?, ?, ?, 'wrapped')`
	rows := [][]any{
		{"0b7c5d1e-1111-4a4a-8b8b-000000000001", "", "echo upstream job ran >> upstream.log", `{"kind":"every","every_ms":3600000}`, "hourly", delivery, "default", created, past},
		{"0b7c5d1e-1111-4a4a-8b8b-000000000002", "", "rm -rf /", `{"kind":"every","every_ms":3600000}`, "bad", delivery, "default", created, past},
		{"0b7c5d1e-1111-4a4a-8b8b-000000000003", "0 9 * * 1-5", "echo weekdays", `{"kind":"cron","expr":"0 9 * * 1-5","tz":"America/New_York"}`, "weekdays", delivery, "default", created, future},
	}
	for _, r := range rows {
		if _, err := db.Exec(insert, r...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO cron_runs (job_id, started_at, finished_at, status, output, duration_ms)
		VALUES ('0b7c5d1e-1111-4a4a-8b8b-000000000003', ?, ?, 'ok', 'status=exit status: 0', 12)`, created, created); err != nil {
		t.Fatal(err)
	}
	db.Close()

	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := cronClient(t, sock)
	eventually(t, 20*time.Second, "the overdue upstream job ran", func() bool {
		return lines(filepath.Join(workspaceOf(root), "upstream.log")) == 1
	})
	list := rpcResult(t, c, 2, "cron/list", map[string]any{})
	byID := map[string]map[string]any{}
	for _, j := range list["jobs"].([]any) {
		m := j.(map[string]any)
		byID[m["id"].(string)] = m
	}
	var bad map[string]any
	eventually(t, 20*time.Second, "the refused job recorded", func() bool {
		bad = rpcResult(t, c, 3, "cron/get", map[string]any{"id": "0b7c5d1e-1111-4a4a-8b8b-000000000002"})
		return bad["last_status"] != nil
	})
	if bad["last_status"] != "error" || !strings.Contains(bad["last_output"].(string), "blocked by security policy") {
		t.Fatalf("refused job: %v", bad)
	}
	wk := byID["0b7c5d1e-1111-4a4a-8b8b-000000000003"]
	sched, _ := json.Marshal(wk["schedule"])
	if string(sched) != `{"expr":"0 9 * * 1-5","kind":"cron","tz":"America/New_York"}` || wk["name"] != "weekdays" {
		t.Fatalf("upstream cron job read as %v", wk)
	}
	if runs := cronRuns(t, c, 4, "0b7c5d1e-1111-4a4a-8b8b-000000000003"); len(runs) != 1 || runs[0]["duration_ms"].(float64) != 12 {
		t.Fatalf("upstream run history: %v", runs)
	}
	ok := cronRuns(t, c, 5, "0b7c5d1e-1111-4a4a-8b8b-000000000001")
	if len(ok) != 1 || ok[0]["status"] != "ok" {
		t.Fatalf("upstream job run: %v", ok)
	}
}

// killIn ends the processes whose working directory is dir (the hung job the killed daemon left behind). It looks
// them up by that exact directory, which belongs to this test alone.
func killIn(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if cwd, err := os.Readlink(filepath.Join(p, "cwd")); err == nil && cwd == dir {
			if pid, err := strconv.Atoi(filepath.Base(p)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}
