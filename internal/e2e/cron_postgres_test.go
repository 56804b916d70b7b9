package e2e

import (
	"context"
	"fmt"
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
	for i := range homes {
		var root string
		homes[i], root = homeWithConfig(t, fmt.Sprintf(cronPGConfig, dsn, schema))
		socks[i] = filepath.Join(root, "data", "daemon.sock")
	}
	daemons := make([]*proc, 3)
	for i := range daemons {
		daemons[i] = start(t, env(homes[i]), "daemon")
		waitSocket(t, daemons[i], socks[i])
	}
	c := cronClient(t, socks[0])
	const jobs = 6
	for i := range jobs {
		rpcResult(t, c, 10+i, "cron/add", map[string]any{"agent": "default", "name": fmt.Sprintf("job-%d", i),
			"schedule": map[string]any{"kind": "every", "every_ms": 1000},
			"command":  fmt.Sprintf("echo job-%d >> %s; sleep 1", i, logPath)})
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
			daemons[i] = start(t, env(homes[i]), "daemon")
			waitSocket(t, daemons[i], socks[i])
		}
		time.Sleep(700 * time.Millisecond)
	}
	// Let every claim end (a killed daemon's expires within 2 s and is swept), then stop the daemons.
	eventually(t, 60*time.Second, "no cron claim left running", func() bool {
		return count("SELECT count(*) FROM "+tbl("zc_work")+" WHERE kind = 'cron' AND state = 'running'") == 0 &&
			count("SELECT count(*) FROM "+tbl("cron_runs")+" WHERE status = 'running'") == 0
	})
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
		t.Fatalf("%d slots whose record disagrees with their run", n)
	}
	lost := count("SELECT count(*) FROM " + tbl("cron_runs") + " WHERE status = 'lost'")
	if lost == 0 {
		t.Fatal("no run was recorded lost: no kill landed mid-run")
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
}
