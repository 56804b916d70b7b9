package rpctest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

// fullShell is the default config with shell auto-approved, so shell jobs run unattended.
var fullShell = strings.Replace(baseConfig, "workspace_only = true", "workspace_only = true\nauto_approve = [\"shell\"]", 1)

func TestCronMethods(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	d := Start(t, WithConfig(fullShell), WithClock(clk))
	c := dialRC(t, d, "")
	jobsDB := filepath.Join(d.ConfigDir, "data", "cron", "jobs.db")

	var list api.CronListResult
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if list.Jobs == nil || len(list.Jobs) != 0 {
		t.Fatalf("cron/list on a fresh install: %+v", list)
	}
	_, werr := c.call(api.MethodCronGet, map[string]any{"id": "nope"})
	wantErr(t, "cron/get unknown", werr, -32602, "not found", "nope")
	if _, err := os.Stat(jobsDB); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads created jobs.db: %v", err)
	}

	// Bad input: a specific -32602 each.
	for _, bad := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"schedule": "*/5 * * * *", "command": "echo hi"}, "agent is required"},
		{map[string]any{"agent": "ghost", "schedule": "*/5 * * * *", "command": "echo hi"}, `unknown agent "ghost"`},
		{map[string]any{"agent": "default", "schedule": "*/5 * * *", "command": "echo hi"}, "expected 5, 6 or 7 fields"},
		{map[string]any{"agent": "default", "schedule": "0 9 * * *", "tz": "Mars/Base", "command": "x"}, "not an IANA zone"},
		{map[string]any{"agent": "default", "schedule": "0 9 * * *"}, "needs a command"},
		{map[string]any{"agent": "default", "schedule": map[string]any{"kind": "every", "every_ms": 0}, "command": "x"}, "every_ms must be > 0"},
		{map[string]any{"agent": "default", "schedule": "0 9 * * *", "command": "rm -rf /"}, "blocked command"},
		{map[string]any{"agent": "default"}, "schedule is required"},
	} {
		_, werr := c.call(api.MethodCronAdd, bad.params)
		wantErr(t, "cron/add "+bad.want, werr, -32602, bad.want)
	}

	var shell api.CronJob
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "default", "schedule": "*/5 * * * *", "tz": "Europe/Paris",
		"command": "echo hello from cron", "name": "greeter"}, &shell)
	raw, _ := json.Marshal(shell.Schedule)
	if string(raw) != `{"kind":"cron","expr":"*/5 * * * *","tz":"Europe/Paris"}` || shell.Expression != "*/5 * * * *" ||
		shell.JobType != "shell" || shell.NextRun != "2026-06-01T08:05:00Z" || shell.AgentAlias != "default" ||
		shell.Source != "imperative" || shell.Delivery.Mode != "none" || shell.LastRun != nil {
		t.Fatalf("cron/add shell: %+v %s", shell, raw)
	}
	var agentJob api.CronJob
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "default", "schedule": map[string]any{"kind": "every", "every_ms": 3_600_000},
		"prompt": "summarise my inbox folder"}, &agentJob)
	if agentJob.JobType != "agent" || agentJob.Prompt == nil || agentJob.SessionTarget != "isolated" {
		t.Fatalf("cron/add prompt: %+v", agentJob)
	}

	var patched api.CronJob
	c.mustCall(api.MethodCronPatch, map[string]any{"id": shell.ID, "schedule": "0 9 * * 1-5", "enabled": false}, &patched)
	raw, _ = json.Marshal(patched.Schedule)
	if string(raw) != `{"kind":"cron","expr":"0 9 * * 1-5","tz":"Europe/Paris"}` || patched.Enabled || patched.NextRun != "2026-06-02T07:00:00Z" {
		t.Fatalf("cron/patch kept tz? %+v %s", patched, raw)
	}
	c.mustCall(api.MethodCronPatch, map[string]any{"id": shell.ID, "clear_tz": true, "schedule": "0 9 * * 1-5"}, &patched)
	if patched.Schedule.TZ != "" {
		t.Fatalf("clear_tz: %+v", patched.Schedule)
	}

	var trig api.CronTriggerResult
	c.mustCall(api.MethodCronTrigger, map[string]any{"id": shell.ID}, &trig)
	if !trig.Success || trig.Status != "ok" || !strings.Contains(trig.Output, "hello from cron") || trig.ID != shell.ID {
		t.Fatalf("cron/trigger shell: %+v", trig)
	}
	c.mustCall(api.MethodCronTrigger, map[string]any{"id": agentJob.ID}, &trig)
	if !trig.Success || trig.Output != "[cron:"+agentJob.ID+" cron-job] summarise my inbox folder" {
		t.Fatalf("cron/trigger agent (echo provider repeats the prompt): %+v", trig)
	}
	var runs api.CronRunsResult
	c.mustCall(api.MethodCronRuns, map[string]any{"id": shell.ID}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "ok" || runs.Runs[0].JobID != shell.ID || runs.Runs[0].DurationMS == nil {
		t.Fatalf("cron/runs: %+v", runs)
	}
	var got api.CronJob
	c.mustCall(api.MethodCronGet, map[string]any{"id": shell.ID}, &got)
	if got.LastStatus == nil || *got.LastStatus != "ok" || got.NextRun != patched.NextRun {
		t.Fatalf("a manual run records last_* and keeps the schedule: %+v", got)
	}

	var settings api.CronSettings
	c.mustCall(api.MethodCronSettings, map[string]any{}, &settings)
	if settings != (api.CronSettings{Enabled: true, MaxTasks: 64, MaxConcurrent: 4, CatchUpOnStartup: true, MaxRunHistory: 50}) {
		t.Fatalf("cron/settings %+v", settings)
	}
	_, werr = c.call(api.MethodCronSettings, map[string]any{"patch": map[string]any{"enabled": false}})
	wantErr(t, "cron/settings patch", werr, -32602, "config/set")

	var del api.CronDeleteResult
	c.mustCall(api.MethodCronDelete, map[string]any{"id": shell.ID}, &del)
	if !del.Deleted || del.ID != shell.ID {
		t.Fatalf("cron/delete %+v", del)
	}
	_, werr = c.call(api.MethodCronDelete, map[string]any{"id": shell.ID})
	wantErr(t, "cron/delete twice", werr, -32602, "not found")
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != agentJob.ID {
		t.Fatalf("cron/list after delete: %+v", list)
	}
}

func TestCronGrants(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("cron:read"))
	u := d.Dial(t)
	u.Initialize()
	mustResult(t, call(t, u, 1, api.MethodCronList, map[string]any{}))
	data := mustError(t, call(t, u, 2, api.MethodCronAdd, map[string]any{"agent": "default", "schedule": "* * * * *", "command": "true"}), -32012)
	if data["grant"] != "cron:create" {
		t.Fatalf("grant %v", data["grant"])
	}
	data = mustError(t, call(t, u, 3, api.MethodCronTrigger, map[string]any{"id": "x"}), -32012)
	if data["grant"] != "cron:execute" {
		t.Fatalf("grant %v", data["grant"])
	}
}

// A job declared in config appears when the config changes (reload or config/set), and goes when it is removed.
func TestCronDeclarativeJobsFollowTheConfig(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	d := Start(t, WithConfig(fullShell), WithClock(clk))
	c := dialRC(t, d, "")
	c.mustCall(api.MethodConfigSetMany, map[string]any{"sets": []map[string]any{
		{"prop": "cron.nightly.command", "value": "echo nightly"},
		{"prop": "cron.nightly.schedule.kind", "value": "cron"},
		{"prop": "cron.nightly.schedule.expr", "value": "0 2 * * *"},
		{"prop": "cron.nightly.schedule.tz", "value": "UTC"},
		{"prop": "agents.default.cron_jobs", "value": []string{"nightly"}},
	}}, nil)
	var job api.CronJob
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, werr := c.call(api.MethodCronGet, map[string]any{"id": "nightly"})
		if werr == nil {
			c.mustCall(api.MethodCronGet, map[string]any{"id": "nightly"}, &job)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the declared job did not appear")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if job.Source != "declarative" || job.AgentAlias != "default" || job.NextRun != "2026-06-02T02:00:00Z" || job.Command != "echo nightly" {
		t.Fatalf("declared job %+v", job)
	}
	c.mustCall("config/map-key-delete", map[string]any{"path": "cron", "key": "nightly"}, nil)
	for {
		_, werr := c.call(api.MethodCronGet, map[string]any{"id": "nightly"})
		if werr != nil && werr.Code == -32602 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job removed from config is still there")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
