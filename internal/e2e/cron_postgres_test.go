package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// cronPGConfig: cronConfig's agent on [storage] backend = "postgres.shared" with 2 s claims, every run kept,
// no retries; the profile lets the shell write to the test's shared log outside the workspace.
const cronPGConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "jobs"

[risk_profiles.jobs]
level = "supervised"
workspace_only = false
auto_approve = ["shell"]

[reliability]
scheduler_poll_secs = 5
scheduler_retries = 0

[scheduler]
max_concurrent = 8
max_run_history = 100000

[storage]
backend = "postgres.shared"
claim_ttl_secs = 2

[storage.postgres.shared]
db_url = %q
schema = %q
`

// cronPGSlots is how many slots the kill test runs through (the 200).
const cronPGSlots = 200

// Three daemons on one PostgreSQL database share six jobs due every second. The test kills -9 the daemon
// holding a running claim, again and again, restarting it each time, until 200 slots (job, occurrence) have
// their end recorded. Then: every slot has exactly one run recorded (ok, or lost for a run its daemon was
// killed in, recorded by another daemon once the claim expired), none is left running or without a record,
// and no job ran more often than its runs say (each run appends one line to a log the daemons share: at least
// one line per ok run, at most one more per lost run).
func TestCronPostgresExactlyOncePerSlotAcrossKill9(t *testing.T) {
	dsn, schema := testPG(t)
	if dsn == "" {
		return
	}
	logPath := filepath.Join(t.TempDir(), "runs.log")
	homes := make([]string, 3)
	socks := make([]string, 3)
	roots := make([]string, 3)
	for i := range homes {
		homes[i], roots[i] = homeWithConfig(t, fmt.Sprintf(cronPGConfig, dsn, schema))
		socks[i] = filepath.Join(roots[i], "data", "daemon.sock")
		t.Cleanup(func() { killIn(workspaceOf(roots[i])) })
	}
	daemons := make([]*proc, 3)
	for i := range daemons {
		daemons[i] = start(t, env(homes[i]), "daemon")
		waitSocket(t, daemons[i], socks[i])
	}
	c := cronClient(t, socks[0])
	const jobs = 6
	var ids []string
	for i := range jobs {
		job := rpcResult(t, c, 10+i, "cron/add", map[string]any{"agent": "default", "name": fmt.Sprintf("job-%d", i),
			"schedule": map[string]any{"kind": "every", "every_ms": 1000},
			"command":  fmt.Sprintf("echo job-%d >> %s; sleep 1", i, logPath)})
		ids = append(ids, job["id"].(string))
	}

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	tbl := func(name string) string { return schema + "." + name }
	ended := func() int {
		return count("SELECT count(*) FROM " + tbl("zc_work") + " WHERE kind = 'cron' AND state <> 'running'")
	}

	// Kill the holder of a running claim, restart it, repeat until the slots are through.
	kills := 0
	deadline := time.Now().Add(150 * time.Second)
	for ended() < cronPGSlots {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d slots ended in 150 s (%d kills)", ended(), cronPGSlots, kills)
		}
		var holder string
		err := conn.QueryRow(t.Context(), "SELECT holder FROM "+tbl("zc_work")+
			" WHERE kind = 'cron' AND state = 'running' AND lease_until > now() ORDER BY claimed_at DESC LIMIT 1").Scan(&holder)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		parts := strings.Split(holder, ":")
		pid, _ := strconv.Atoi(parts[len(parts)-2])
		for i, d := range daemons {
			if d.cmd.Process.Pid != pid || d.exited() {
				continue
			}
			signal(t, d, syscall.SIGKILL)
			d.wait(t, 10*time.Second)
			kills++
			// The killed daemon's job shells outlive it (and hold what they inherited): end them, as a
			// machine's restart would, before the daemon starts again.
			killIn(workspaceOf(roots[i]))
			daemons[i] = restartDaemon(t, homes[i], socks[i])
		}
		// Leave the others time to take the killed daemon's work over and to finish runs of their own.
		time.Sleep(2 * time.Second)
	}
	// Disable the jobs (on another daemon than the one they were added on: the store is shared), let every
	// claim end (a killed daemon's expires within 2 s and is swept), then stop the daemons.
	pc := cronClient(t, socks[2])
	for i, id := range ids {
		rpcResult(t, pc, 50+i, "cron/patch", map[string]any{"id": id, "enabled": false})
	}
	eventually(t, 60*time.Second, "no cron claim left running", func() bool {
		return count("SELECT count(*) FROM "+tbl("zc_work")+" WHERE kind = 'cron' AND state = 'running'") == 0 &&
			count("SELECT count(*) FROM "+tbl("cron_runs")+" WHERE status = 'running'") == 0
	})
	// status and health show the shared backend and the three live daemons (announced every 5 s).
	sc := cronClient(t, socks[1])
	var st map[string]any
	eventually(t, 30*time.Second, "status.storage lists three peers", func() bool {
		st = rpcResult(t, sc, 100, "status", map[string]any{})
		s, _ := st["storage"].(map[string]any)
		peers, _ := s["peers"].([]any)
		return s != nil && s["backend"] == "postgres.shared" && len(peers) == 3
	})
	h := rpcResult(t, sc, 101, "health", map[string]any{})
	comp, _ := h["components"].(map[string]any)["storage"].(map[string]any)
	if comp == nil || comp["status"] != "ok" || !strings.HasPrefix(fmt.Sprint(comp["detail"]), "postgres.shared: 3 peer(s)") {
		t.Fatalf("health's storage component: %v", h)
	}
	if out := runOK(t, env(homes[1]), "", "status"); !strings.Contains(out, "storage:     postgres.shared, shared: 3 peer(s) seen") ||
		!strings.Contains(out, "(this daemon)") {
		t.Fatalf("zeroclaw status:\n%s", out)
	}
	for _, d := range daemons {
		signal(t, d, syscall.SIGTERM)
	}
	for _, d := range daemons {
		d.wait(t, 30*time.Second)
	}

	slots := ended()
	if kills < 5 {
		t.Fatalf("only %d kills in %d slots: the test did not exercise kill -9 mid-run", kills, slots)
	}
	// Each slot has one run record: a slot without a run, or a run without its slot, is a failure.
	if n := count("SELECT count(*) FROM " + tbl("cron_runs") + " WHERE slot IS NULL"); n != 0 {
		t.Fatalf("%d runs have no slot", n)
	}
	if n := count("SELECT count(*) FROM (SELECT slot FROM " + tbl("cron_runs") + " GROUP BY slot HAVING count(*) > 1) d"); n != 0 {
		t.Fatalf("%d slots have more than one run recorded", n)
	}
	unrecorded := count("SELECT count(*) FROM " + tbl("zc_work") + " w WHERE kind = 'cron' AND outcome NOT LIKE 'not run:%' AND NOT EXISTS (SELECT 1 FROM " +
		tbl("cron_runs") + " r WHERE r.slot = w.slot)")
	if unrecorded != 0 {
		t.Fatalf("%d slots ended without a run recorded", unrecorded)
	}
	if n := count("SELECT count(*) FROM " + tbl("cron_runs") + " r WHERE NOT EXISTS (SELECT 1 FROM " + tbl("zc_work") + " w WHERE w.kind = 'cron' AND w.slot = r.slot)"); n != 0 {
		t.Fatalf("%d runs were recorded without a claimed slot", n)
	}
	// A done slot's run is ok; an interrupted slot's run is lost.
	if n := count("SELECT count(*) FROM " + tbl("zc_work") + " w JOIN " + tbl("cron_runs") + " r ON r.slot = w.slot WHERE w.kind = 'cron' AND " +
		"((w.state = 'done') <> (r.status = 'ok') OR (w.state = 'interrupted') <> (r.status = 'lost'))"); n != 0 {
		rows, _ := conn.Query(t.Context(), "SELECT w.slot, w.state, w.outcome, r.status, coalesce(r.output, '') FROM "+tbl("zc_work")+" w JOIN "+
			tbl("cron_runs")+" r ON r.slot = w.slot WHERE w.kind = 'cron' AND ((w.state = 'done') <> (r.status = 'ok') OR (w.state = 'interrupted') <> (r.status = 'lost'))")
		for rows.Next() {
			var slot, state, outcome, status, output string
			_ = rows.Scan(&slot, &state, &outcome, &status, &output)
			t.Logf("slot %s: %s (%s), run %s: %q", slot, state, outcome, status, output)
		}
		rows.Close()
		t.Fatalf("%d slots whose record disagrees with their run", n)
	}
	lost := count("SELECT count(*) FROM " + tbl("cron_runs") + " WHERE status = 'lost'")
	if ok := count("SELECT count(*) FROM " + tbl("cron_runs") + " WHERE status = 'ok'"); lost == 0 || ok == 0 {
		t.Fatalf("%d runs lost, %d ok: the test needs both (kills that land mid-run, and runs that finish)", lost, ok)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	for i := range jobs {
		name := fmt.Sprintf("job-%d", i)
		ran := 0
		for _, l := range lines {
			if l == name {
				ran++
			}
		}
		var ok, lostJob int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FILTER (WHERE r.status = 'ok'), count(*) FILTER (WHERE r.status = 'lost') FROM "+
			tbl("cron_runs")+" r JOIN "+tbl("cron_jobs")+" j ON j.id = r.job_id WHERE j.name = $1", name).Scan(&ok, &lostJob); err != nil {
			t.Fatal(err)
		}
		if ran < ok || ran > ok+lostJob {
			t.Errorf("%s ran %d times; its runs: %d ok, %d lost (a run executed twice, or an ok run that never ran)", name, ran, ok, lostJob)
		}
	}
	t.Logf("%d slots, %d kills, %d runs lost to kills, %d executions logged", slots, kills, lost, len(lines))
	// Each daemon announced itself, the killed ones under their earlier pids too.
	if n := count("SELECT count(*) FROM " + tbl("zc_peers")); n < 3+kills {
		t.Fatalf("%d peers announced, want at least %d (three daemons and a restart per kill)", n, 3+kills)
	}
}

// restartDaemon starts the daemon of home again after a kill -9, retrying while the endpoint is still held by
// what the killed one left (a job's shell exiting): at most 20 tries, 250 ms apart.
func restartDaemon(t *testing.T, home, sock string) *proc {
	t.Helper()
	for try := 0; ; try++ {
		d := start(t, env(home), "daemon")
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && !d.exited() {
			if c, err := net.Dial("unix", sock); err == nil {
				c.Close()
				return d
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !d.exited() || try == 20 || !strings.Contains(d.stderr.String(), "another daemon") {
			t.Fatalf("daemon of %s did not come back (try %d); stderr:\n%s", home, try, d.stderr.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
}
