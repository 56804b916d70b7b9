// Package cron runs scheduled jobs: the schedules (cron expressions with time zones, one-shot `at`, `every`
// intervals), the scheduler that claims due jobs from data/cron/jobs.db and runs them as shell commands or
// agent turns under the owning agent's risk profile, and the job operations the RPC methods and tools use.
package cron

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Job types and session targets (upstream's names).
const (
	TypeShell = "shell"
	TypeAgent = "agent"

	TargetIsolated = "isolated"
	TargetMain     = "main"

	FormatWrapped = "wrapped"
	FormatRaw     = "raw"
)

// scheduleOf decodes a row's schedule; a legacy row without one is its cron expression in the host zone.
func scheduleOf(j store.CronJob) (api.CronSchedule, error) {
	if strings.TrimSpace(j.Schedule) == "" {
		if strings.TrimSpace(j.Expression) == "" {
			return api.CronSchedule{}, fmt.Errorf("%w: job %s has neither schedule nor expression", ErrSchedule, j.ID)
		}
		return api.CronSchedule{Kind: api.ScheduleCron, Expr: j.Expression}, nil
	}
	var sc api.CronSchedule
	if err := json.Unmarshal([]byte(j.Schedule), &sc); err != nil {
		return api.CronSchedule{}, fmt.Errorf("%w: job %s: %v", ErrSchedule, j.ID, err)
	}
	return sc, nil
}

func encodeSchedule(sc api.CronSchedule) (string, error) {
	b, err := json.Marshal(sc)
	return string(b), err
}

// deliveryOf decodes a row's delivery; NULL is upstream's default (mode none, best effort).
func deliveryOf(j store.CronJob) api.CronDelivery {
	d := api.CronDelivery{Mode: "none", BestEffort: true}
	if strings.TrimSpace(j.Delivery) != "" {
		_ = json.Unmarshal([]byte(j.Delivery), &d)
	}
	return d
}

func allowedToolsOf(j store.CronJob) []string {
	if strings.TrimSpace(j.AllowedTools) == "" {
		return nil
	}
	var tools []string
	_ = json.Unmarshal([]byte(j.AllowedTools), &tools)
	return tools
}

// Wire renders a stored job as upstream serializes it.
func Wire(j store.CronJob) api.CronJob {
	sc, err := scheduleOf(j)
	if err != nil {
		sc = api.CronSchedule{Kind: api.ScheduleCron, Expr: j.Expression}
	}
	w := api.CronJob{
		ID: j.ID, Expression: j.Expression, Schedule: sc, Command: j.Command, Prompt: j.Prompt, Name: j.Name,
		JobType: j.JobType, SessionTarget: j.SessionTarget, Model: j.Model, AgentAlias: j.AgentAlias,
		Enabled: j.Enabled, Delivery: deliveryOf(j), DeleteAfterRun: j.DeleteAfterRun,
		AllowedTools: allowedToolsOf(j), UsesMemory: j.UsesMemory, Source: j.Source,
		ShellOutputFormat: j.ShellOutputFormat, CreatedAt: wireTime(j.CreatedAt), NextRun: wireTime(j.NextRun),
		LastStatus: j.LastStatus, LastOutput: j.LastOutput,
	}
	if w.JobType == "" {
		w.JobType = TypeShell
	}
	if w.SessionTarget == "" {
		w.SessionTarget = TargetIsolated
	}
	if w.ShellOutputFormat == "" {
		w.ShellOutputFormat = FormatWrapped
	}
	if j.LastRun != nil {
		s := wireTime(*j.LastRun)
		w.LastRun = &s
	}
	return w
}

// WireRun renders a stored run.
func WireRun(r store.CronRun) api.CronRun {
	return api.CronRun{ID: r.ID, JobID: r.JobID, StartedAt: wireTime(r.StartedAt), FinishedAt: wireTime(r.FinishedAt),
		Status: r.Status, Output: r.Output, DurationMS: r.DurationMS}
}
