package rpctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
)

const heartbeatOn = "\n[heartbeat]\nenabled = true\nagent = \"default\"\ninterval_minutes = 3\ntwo_phase = false\n"

// A real heartbeat slot on the echo provider: the task whose turn calls heartbeat_complete is ok, the one the
// model only answers is error (answering is not completion), both visible in heartbeat/runs and status.
func TestHeartbeatRunsEchoCompletion(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	d := Start(t, WithConfig(baseConfig+heartbeatOn), WithClock(clk))
	c := dialRC(t, d, "")
	file := filepath.Join(d.ConfigDir, "agents", "default", "workspace", heartbeat.FileName)
	seeded, err := os.ReadFile(file)
	if err != nil || string(seeded) != heartbeat.DefaultFile {
		t.Fatalf("HEARTBEAT.md not seeded in the agent workspace: %v", err)
	}
	if err := os.WriteFile(file, []byte("# tasks\n- [high] /tool heartbeat_complete {\"summary\":\"disk checked\"}\n- just answer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !clk.WaitTimer(3*time.Minute, 10*time.Second) {
		t.Fatal("no heartbeat slot armed")
	}
	clk.Advance(3 * time.Minute)
	var res api.HeartbeatRunsResult
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.mustCall(api.MethodHeartbeatRuns, map[string]any{}, &res)
		if len(res.Runs) == 2 && res.Runs[0].Status != api.HeartbeatRunning && res.Runs[1].Status != api.HeartbeatRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs = %+v", res.Runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	byTask := map[string]api.HeartbeatRun{}
	for _, r := range res.Runs {
		byTask[r.TaskText] = r
	}
	if r := byTask[`/tool heartbeat_complete {"summary":"disk checked"}`]; r.Status != api.HeartbeatOK || r.TaskPriority != "high" ||
		!strings.Contains(r.Output, "heartbeat_complete returned") {
		t.Errorf("completed task: %+v", r)
	}
	if r := byTask["just answer"]; r.Status != api.HeartbeatError || !strings.Contains(r.Output, "without calling heartbeat_complete") {
		t.Errorf("answered-only task: %+v", r)
	}
	if !res.Heartbeat.Enabled || res.Heartbeat.Agent != "default" || res.Heartbeat.IntervalMinutes != 3 {
		t.Errorf("state = %+v", res.Heartbeat)
	}
	var st api.StatusResult
	c.mustCall("status", map[string]any{}, &st)
	if st.Heartbeat == nil || !st.Heartbeat.Enabled || st.Heartbeat.NextSlotAt == "" {
		t.Fatalf("status.heartbeat = %+v", st.Heartbeat)
	}
}

// A [heartbeat] without an agent: the daemon runs, the heartbeat stays off, status and doctor say why, and no
// slot is ever armed (no restart loop).
func TestHeartbeatMissingAgentIsOneError(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	d := Start(t, WithConfig(baseConfig+"\n[heartbeat]\nenabled = true\ninterval_minutes = 7\n"), WithClock(clk))
	c := dialRC(t, d, "")
	var st api.StatusResult
	c.mustCall("status", map[string]any{}, &st)
	if st.Heartbeat == nil || st.Heartbeat.Enabled || !strings.Contains(st.Heartbeat.Problem, "heartbeat.agent: must reference a configured agent") {
		t.Fatalf("status.heartbeat = %+v", st.Heartbeat)
	}
	if clk.WaitTimer(7*time.Minute, 200*time.Millisecond) {
		t.Fatal("a slot was armed for a heartbeat without an agent")
	}
	var doc api.DoctorResult
	c.mustCall(api.MethodDoctorRun, map[string]any{"offline": true}, &doc)
	var found bool
	for _, f := range doc.Results {
		if f.ID == "heartbeat-disabled-by-config" && f.Severity == api.SeverityError {
			found = true
		}
	}
	if !found {
		t.Fatalf("doctor has no heartbeat-disabled-by-config error: %+v", doc.Results)
	}
}

// heartbeat/runs needs heartbeat:read.
func TestHeartbeatRunsGrant(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("status:read"))
	u := d.Dial(t)
	u.Initialize()
	data := mustError(t, call(t, u, 1, api.MethodHeartbeatRuns, map[string]any{}), -32012)
	if data["grant"] != api.GrantHeartbeatRead {
		t.Fatalf("grant %v", data["grant"])
	}
	d2 := Start(t, asUser(api.GrantHeartbeatRead))
	u2 := d2.Dial(t)
	u2.Initialize()
	mustResult(t, call(t, u2, 1, api.MethodHeartbeatRuns, map[string]any{"limit": 5}))
}
