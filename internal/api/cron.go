package api

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Cron method names (upstream/rpc-methods.md).
const (
	MethodCronList     = "cron/list"
	MethodCronGet      = "cron/get"
	MethodCronAdd      = "cron/add"
	MethodCronPatch    = "cron/patch"
	MethodCronDelete   = "cron/delete"
	MethodCronRuns     = "cron/runs"
	MethodCronTrigger  = "cron/trigger"
	MethodCronSettings = "cron/settings"
)

// Schedule kinds.
const (
	ScheduleCron  = "cron"
	ScheduleAt    = "at"
	ScheduleEvery = "every"
)

// CronSchedule is a job's schedule, internally tagged by kind as upstream serializes it:
// {"kind":"cron","expr":"0 9 * * 1-5","tz":"America/New_York"} | {"kind":"at","at":"<RFC 3339>"} |
// {"kind":"every","every_ms":3600000}. A cron schedule without a time zone carries "tz":null.
type CronSchedule struct {
	Kind    string
	Expr    string
	TZ      string // "" = the host's time zone
	At      string // RFC 3339
	EveryMS int64
}

// MarshalJSON writes the kind's fields only.
func (s CronSchedule) MarshalJSON() ([]byte, error) {
	switch s.Kind {
	case ScheduleCron:
		var tz *string
		if s.TZ != "" {
			tz = &s.TZ
		}
		return json.Marshal(struct {
			Kind string  `json:"kind"`
			Expr string  `json:"expr"`
			TZ   *string `json:"tz"`
		}{s.Kind, s.Expr, tz})
	case ScheduleAt:
		return json.Marshal(struct {
			Kind string `json:"kind"`
			At   string `json:"at"`
		}{s.Kind, s.At})
	case ScheduleEvery:
		return json.Marshal(struct {
			Kind    string `json:"kind"`
			EveryMS int64  `json:"every_ms"`
		}{s.Kind, s.EveryMS})
	}
	return nil, fmt.Errorf("api: schedule kind %q: want cron, at or every", s.Kind)
}

// UnmarshalJSON reads an object, or (as upstream accepts from tools) a string holding one. A kind without its
// field is an error; validity of the values is the cron package's to judge.
func (s *CronSchedule) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var inner string
		if err := json.Unmarshal(b, &inner); err != nil {
			return err
		}
		b = []byte(inner)
	}
	var raw struct {
		Kind    string          `json:"kind"`
		Expr    *string         `json:"expr"`
		TZ      *string         `json:"tz"`
		At      *string         `json:"at"`
		EveryMS json.RawMessage `json:"every_ms"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("schedule must be an object {kind, ...}: %w", err)
	}
	*s = CronSchedule{Kind: raw.Kind}
	switch raw.Kind {
	case ScheduleCron:
		if raw.Expr == nil {
			return fmt.Errorf("schedule kind cron needs expr")
		}
		s.Expr = *raw.Expr
		if raw.TZ != nil {
			s.TZ = *raw.TZ
		}
	case ScheduleAt:
		if raw.At == nil {
			return fmt.Errorf("schedule kind at needs at (RFC 3339)")
		}
		s.At = *raw.At
	case ScheduleEvery:
		if len(raw.EveryMS) == 0 {
			return fmt.Errorf("schedule kind every needs every_ms")
		}
		if err := json.Unmarshal(raw.EveryMS, &s.EveryMS); err != nil {
			return fmt.Errorf("schedule every_ms must be an integer: %w", err)
		}
	default:
		return fmt.Errorf("schedule kind %q: want cron, at or every", raw.Kind)
	}
	return nil
}

// CronDelivery is where a job's output is announced (upstream's DeliveryConfig). Only mode "none" runs here:
// this daemon has no channels yet.
type CronDelivery struct {
	Mode       string  `json:"mode"`
	Channel    *string `json:"channel"`
	To         *string `json:"to"`
	ThreadID   *string `json:"thread_id,omitempty"`
	BestEffort bool    `json:"best_effort"`
}

// CronJob is a job as upstream serializes it. Timestamps are RFC 3339 UTC.
type CronJob struct {
	ID                string       `json:"id"`
	Expression        string       `json:"expression"`
	Schedule          CronSchedule `json:"schedule"`
	Command           string       `json:"command"`
	Prompt            *string      `json:"prompt"`
	Name              *string      `json:"name"`
	JobType           string       `json:"job_type"`
	SessionTarget     string       `json:"session_target"`
	Model             *string      `json:"model"`
	AgentAlias        string       `json:"agent_alias"`
	Enabled           bool         `json:"enabled"`
	Delivery          CronDelivery `json:"delivery"`
	DeleteAfterRun    bool         `json:"delete_after_run"`
	AllowedTools      []string     `json:"allowed_tools,omitempty"`
	UsesMemory        bool         `json:"uses_memory"`
	Source            string       `json:"source"`
	ShellOutputFormat string       `json:"shell_output_format"`
	CreatedAt         string       `json:"created_at"`
	NextRun           string       `json:"next_run"`
	LastRun           *string      `json:"last_run"`
	LastStatus        *string      `json:"last_status"`
	LastOutput        *string      `json:"last_output"`
}

// CronRun is one run of a job. Status is ok, error, skipped (upstream), or running, lost (ours).
type CronRun struct {
	ID         int64   `json:"id"`
	JobID      string  `json:"job_id"`
	StartedAt  string  `json:"started_at"`
	FinishedAt string  `json:"finished_at"`
	Status     string  `json:"status"`
	Output     *string `json:"output"`
	DurationMS *int64  `json:"duration_ms"`
}

// CronListParams are cron/list's params (ours: upstream's takes none and answers every job). Limit is the page
// size: 0 means DefaultCronListLimit, more than MaxCronListLimit is that; Offset skips that many of the jobs the
// caller may see. A negative one is refused.
type CronListParams struct {
	Limit  int `json:"limit,omitempty"`
	Offset int `json:"offset,omitempty"`
}

// Page sizes of cron/list (ours). The default is large enough that an upstream client, which sends no limit,
// gets every job of any ordinary install in one answer; past it the answer says has_more.
const (
	DefaultCronListLimit = 500
	MaxCronListLimit     = 1000
)

// CronListResult answers cron/list. HasMore and NextOffset (ours, as session/list's) say that jobs beyond this
// page exist and the offset that asks for them.
type CronListResult struct {
	Jobs       []CronJob `json:"jobs"`
	HasMore    bool      `json:"has_more,omitempty"`
	NextOffset int       `json:"next_offset,omitempty"`
}

// CronIDParams are the params of cron/get, cron/delete and cron/trigger.
type CronIDParams struct {
	ID string `json:"id"`
}

// CronAddParams are cron/add's params (upstream's shape). Schedule is a cron expression (with tz), or, ours, a
// schedule object ({kind:"at"|"every"|"cron",...}). Upstream's handler creates shell jobs only; ours creates the
// agent job that job_type "agent" (or a prompt without a command) asks for.
type CronAddParams struct {
	Agent          string          `json:"agent"`
	Schedule       json.RawMessage `json:"schedule"`
	TZ             string          `json:"tz,omitempty"`
	Command        string          `json:"command,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	Name           string          `json:"name,omitempty"`
	JobType        string          `json:"job_type,omitempty"`
	Delivery       *CronDelivery   `json:"delivery,omitempty"`
	SessionTarget  string          `json:"session_target,omitempty"`
	Model          string          `json:"model,omitempty"`
	AllowedTools   []string        `json:"allowed_tools,omitempty"`
	DeleteAfterRun *bool           `json:"delete_after_run,omitempty"`
}

// CronPatchParams are cron/patch's params (upstream's shape, plus enabled). Schedule replaces a cron expression
// (keeping tz unless tz or clear_tz is given), or, ours, is a schedule object.
type CronPatchParams struct {
	ID       string          `json:"id"`
	Agent    string          `json:"agent,omitempty"`
	Name     *string         `json:"name,omitempty"`
	Schedule json.RawMessage `json:"schedule,omitempty"`
	TZ       *string         `json:"tz,omitempty"`
	ClearTZ  bool            `json:"clear_tz,omitempty"`
	Command  *string         `json:"command,omitempty"`
	Prompt   *string         `json:"prompt,omitempty"`
	Enabled  *bool           `json:"enabled,omitempty"`
}

// CronDeleteResult answers cron/delete.
type CronDeleteResult struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// CronRunsParams are cron/runs' params; Limit 0 means 20.
type CronRunsParams struct {
	ID    string `json:"id"`
	Limit int    `json:"limit,omitempty"`
}

// CronRunsResult answers cron/runs, newest first.
type CronRunsResult struct {
	Runs []CronRun `json:"runs"`
}

// CronTriggerResult answers cron/trigger, which runs the job now and waits for it.
type CronTriggerResult struct {
	ID         string `json:"id"`
	Success    bool   `json:"success"`
	Status     string `json:"status"`
	Output     string `json:"output"`
	DurationMS int64  `json:"duration_ms"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at"`
}

// CronSettingsParams are cron/settings' params; a patch is refused as upstream does.
type CronSettingsParams struct {
	Patch json.RawMessage `json:"patch,omitempty"`
}

// CronSettings answers cron/settings: the [scheduler] section.
type CronSettings struct {
	Enabled          bool `json:"enabled"`
	MaxTasks         int  `json:"max_tasks"`
	MaxConcurrent    int  `json:"max_concurrent"`
	CatchUpOnStartup bool `json:"catch_up_on_startup"`
	MaxRunHistory    int  `json:"max_run_history"`
}
