package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Cron tool names (upstream's).
const (
	NameCronAdd    = "cron_add"
	NameCronList   = "cron_list"
	NameCronRemove = "cron_remove"
	NameCronUpdate = "cron_update"
	NameCronRun    = "cron_run"
	NameCronRuns   = "cron_runs"
)

// Cron is the scheduler as the cron_* tools reach it, scoped to the agent whose turn calls them: the jobs it
// adds belong to that agent, and it finds, lists and changes only that agent's jobs (another agent's job is
// not found). Its errors are shown to the model as they are. Implementations live with the scheduler; this
// package only describes what the tools need.
type Cron interface {
	// Enabled reports [scheduler] enabled: when false every cron tool refuses, as upstream's do.
	Enabled() bool
	Add(ctx context.Context, r CronAdd) (api.CronJob, error)
	List(ctx context.Context) ([]api.CronJob, error)
	// Resolve maps a job id, or a case-insensitive job name, to the id of one of the agent's jobs.
	Resolve(ctx context.Context, idOrName string) (string, error)
	Update(ctx context.Context, id string, p CronPatch) (api.CronJob, error)
	Remove(ctx context.Context, id string) error
	// Run runs the job now and waits for it; the schedule is left as it is.
	Run(ctx context.Context, id string) (api.CronTriggerResult, error)
	// Runs returns the newest limit runs, newest first.
	Runs(ctx context.Context, id string, limit int) ([]api.CronRun, error)
}

// CronAdd is a job cron_add asks for. Zero values are the scheduler's defaults.
type CronAdd struct {
	Schedule                                             api.CronSchedule
	Name, JobType, Command, Prompt, SessionTarget, Model string
	AllowedTools                                         []string
	DeleteAfterRun, UsesMemory                           *bool
	Delivery                                             *api.CronDelivery
}

// CronPatch is what cron_update changes; nil fields are kept.
type CronPatch struct {
	Name, Command, Prompt, Model, SessionTarget *string
	Enabled, DeleteAfterRun, UsesMemory         *bool
	AllowedTools                                *[]string
	Schedule                                    *api.CronSchedule
	Delivery                                    *api.CronDelivery
}

const (
	cronTZDescription = "IANA time zone name, e.g. 'Europe/Paris'. Without it the expression is read in the daemon host's local time zone; give one for schedules a person cares about."
	cronAtDescription = "RFC 3339 timestamp with Z or an explicit offset, e.g. '2026-12-31T23:59:00Z' or '2026-12-31T18:59:00-05:00'."
	cronApproved      = `"approved":{"type":"boolean","description":"Accepted for compatibility; it grants nothing here: the call itself is approved (or refused) under the agent's risk profile, and a job's shell command runs under that profile.","default":false}`
	cronDelivery      = `"delivery":{"type":"object","description":"Where to send each run's output. Only mode 'none' is available: this daemon has no channels to announce on.","properties":{"mode":{"type":"string","enum":["none","announce"]},"channel":{"type":"string"},"to":{"type":"string"},"thread_id":{"type":"string"},"best_effort":{"type":"boolean"}}}`
)

func cronScheduleSchema(withAfter bool) string {
	forms := []string{
		`{"type":"object","description":"Repeating cron expression, e.g. {\"kind\":\"cron\",\"expr\":\"0 9 * * 1-5\",\"tz\":\"Europe/Paris\"}","properties":{"kind":{"type":"string","enum":["cron"]},"expr":{"type":"string","description":"5-field cron expression (minute hour day-of-month month day-of-week), e.g. '*/5 * * * *'"},"tz":{"type":"string","description":` + quote(cronTZDescription) + `}},"required":["kind","expr"]}`,
		`{"type":"object","description":"One-shot run at a timestamp, e.g. {\"kind\":\"at\",\"at\":\"2026-12-31T23:59:00Z\"}","properties":{"kind":{"type":"string","enum":["at"]},"at":{"type":"string","description":` + quote(cronAtDescription) + `}},"required":["kind","at"]}`,
	}
	if withAfter {
		forms = append(forms, `{"type":"object","description":"One-shot run after a delay in seconds from now, e.g. {\"kind\":\"after\",\"after_seconds\":600}; best for 'in 10 minutes'.","properties":{"kind":{"type":"string","enum":["after"]},"after_seconds":{"type":"integer","minimum":1}},"required":["kind","after_seconds"]}`)
	}
	forms = append(forms, `{"type":"object","description":"Repeating interval in milliseconds, e.g. {\"kind\":\"every\",\"every_ms\":3600000} for hourly.","properties":{"kind":{"type":"string","enum":["every"]},"every_ms":{"type":"integer","minimum":1}},"required":["kind","every_ms"]}`)
	return `"schedule":{"description":"When the job runs: exactly one of these forms.","oneOf":[` + strings.Join(forms, ",") + `]}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cronSpecs are the cron tools, offered only when the turn can reach the scheduler (Env.Cron).
func buildCronSpecs() []Spec {
	jobFields := `"name":{"type":"string","description":"A name for the job; the other cron tools accept it in place of the id."},` +
		`"command":{"type":"string","description":"Shell command (shell jobs); it runs in the agent's workspace under the agent's risk profile."},` +
		`"prompt":{"type":"string","description":"What the agent is asked on each run (agent jobs)."},` +
		`"session_target":{"type":"string","enum":["isolated","main"],"description":"Agent jobs: 'isolated' (default) runs each time in a fresh session, 'main' continues the agent's standing cron session."},` +
		`"model":{"type":"string","description":"Model override for agent jobs."},` +
		`"allowed_tools":{"type":"array","items":{"type":"string"},"description":"Agent jobs: the only tools the run may use. Without it the run has the agent's tools less cron_add, cron_update, cron_remove and cron_run; list them here to allow them."},` +
		`"delete_after_run":{"type":"boolean","description":"Delete the job after its first successful run (default: true for 'at' and 'after' schedules)."},` +
		`"uses_memory":{"type":"boolean","description":"Agent jobs: recall the agent's memory before each run (default true).","default":true},` +
		cronDelivery
	return []Spec{
		{
			Name: NameCronAdd,
			Description: "Schedule a job: a shell command (job_type 'shell') or a prompt the agent runs unattended (job_type 'agent'). " +
				"Schedules: a cron expression, a time ('at'), a delay from now ('after') or an interval ('every'). Returns the job with its next run.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` + cronScheduleSchema(true) +
				`,"job_type":{"type":"string","enum":["shell","agent"],"description":"'shell' runs command; 'agent' runs prompt as an agent turn. Default: agent when only a prompt is given, else shell."},` +
				jobFields + `,` + cronApproved + `},"required":["schedule"]}`),
		},
		{
			Name:        NameCronList,
			Description: "List this agent's scheduled jobs with their next runs, as JSON.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		},
		{
			Name:        NameCronRemove,
			Description: "Delete one of this agent's scheduled jobs (and its run history) by id or name.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"job_id":{"type":"string","description":"The job's id (from cron_add or cron_list) or its name, case-insensitive."}},"required":["job_id"]}`),
		},
		{
			Name:        NameCronUpdate,
			Description: "Change one of this agent's scheduled jobs by id or name: only the fields given in patch change. Returns the job.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"job_id":{"type":"string","description":"The job's id or its name, case-insensitive."},` +
				`"patch":{"type":"object","description":"The fields to change.","properties":{"enabled":{"type":"boolean","description":"Pause (false) or resume (true) the job."},` +
				cronScheduleSchema(false) + `,` + jobFields + `}},` + cronApproved + `},"required":["job_id","patch"]}`),
		},
		{
			Name:        NameCronRun,
			Description: "Run one of this agent's scheduled jobs now and wait for it; the run is recorded in its history and the schedule is unchanged.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"job_id":{"type":"string","description":"The job's id or its name."},` + cronApproved + `},"required":["job_id"]}`),
		},
		{
			Name:        NameCronRuns,
			Description: "Show the recent runs of one of this agent's scheduled jobs, newest first (outputs cut at 500 characters).",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"job_id":{"type":"string","description":"The job's id or its name."},"limit":{"type":"integer","minimum":1,"description":"How many runs (default 10)."}},"required":["job_id"]}`),
		},
	}
}

func isCronTool(name string) bool {
	switch name {
	case NameCronAdd, NameCronList, NameCronRemove, NameCronUpdate, NameCronRun, NameCronRuns:
		return true
	}
	return false
}

// cronWrite reports whether a cron tool changes or runs jobs (medium risk); cron_list and cron_runs only read.
func cronWrite(name string) bool {
	return name != NameCronList && name != NameCronRuns
}

// cronArgs are the arguments of every cron tool; each reads its own.
type cronArgs struct {
	JobID          *string         `json:"job_id"`
	Limit          *int            `json:"limit"`
	Patch          json.RawMessage `json:"patch"`
	Schedule       json.RawMessage `json:"schedule"`
	Name           *string         `json:"name"`
	JobType        *string         `json:"job_type"`
	Command        *string         `json:"command"`
	Prompt         *string         `json:"prompt"`
	SessionTarget  *string         `json:"session_target"`
	Model          *string         `json:"model"`
	AllowedTools   *[]string       `json:"allowed_tools"`
	DeleteAfterRun *bool           `json:"delete_after_run"`
	UsesMemory     *bool           `json:"uses_memory"`
	Enabled        *bool           `json:"enabled"`
	Delivery       json.RawMessage `json:"delivery"`
	Approved       *bool           `json:"approved"`
}

func parseCron(call Call) (cronArgs, error) {
	var a cronArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return a, fmt.Errorf("%s: %w", call.Name, err)
	}
	return a, nil
}

func runCron(ctx context.Context, env Env, call Call) Result {
	if env.Cron == nil {
		return errorf("%s: scheduled jobs are not available to this turn", call.Name)
	}
	if !env.Cron.Enabled() {
		return errorf("cron is disabled by config (scheduler.enabled=false)")
	}
	a, err := parseCron(call)
	if err != nil {
		return errorf("%s", err)
	}
	c := env.Cron
	if call.Name == NameCronList {
		jobs, err := c.List(ctx)
		if err != nil {
			return errorf("%v", err)
		}
		out := make([]cronJobView, 0, len(jobs))
		for _, j := range jobs {
			out = append(out, jobView(j))
		}
		return prettyJSON(out)
	}
	if call.Name == NameCronAdd {
		return cronAdd(ctx, env, a)
	}
	if a.JobID == nil || strings.TrimSpace(*a.JobID) == "" {
		return errorf("Missing 'job_id' parameter")
	}
	id, err := c.Resolve(ctx, *a.JobID)
	if err != nil {
		return errorf("%v", err)
	}
	switch call.Name {
	case NameCronRemove:
		if err := c.Remove(ctx, id); err != nil {
			return errorf("%v", err)
		}
		return Result{Output: "Removed cron job " + id}
	case NameCronUpdate:
		p, err := cronPatch(a.Patch)
		if err != nil {
			return errorf("%v", err)
		}
		j, err := c.Update(ctx, id, p)
		if err != nil {
			return errorf("%v", err)
		}
		return prettyJSON(jobView(j))
	case NameCronRun:
		r, err := c.Run(ctx, id)
		if err != nil {
			return errorf("%v", err)
		}
		res := prettyJSON(struct {
			JobID      string `json:"job_id"`
			Status     string `json:"status"`
			DurationMS int64  `json:"duration_ms"`
			Output     string `json:"output"`
		}{r.ID, r.Status, r.DurationMS, r.Output})
		res.IsError = !r.Success
		return res
	case NameCronRuns:
		limit := 10
		if a.Limit != nil && *a.Limit > 0 {
			limit = *a.Limit
		}
		runs, err := c.Runs(ctx, id, limit)
		if err != nil {
			return errorf("%v", err)
		}
		for i, r := range runs {
			if r.Output != nil {
				s := truncateChars(*r.Output, 500)
				runs[i].Output = &s
			}
		}
		if runs == nil {
			runs = []api.CronRun{}
		}
		return prettyJSON(runs)
	}
	return errorf("%s: unknown tool", call.Name)
}

func cronAdd(ctx context.Context, env Env, a cronArgs) Result {
	sc, err := cronSchedule(a.Schedule, env.now(), true)
	if err != nil {
		return errorf("%v", err)
	}
	r := CronAdd{Schedule: sc, Name: str(a.Name), Model: str(a.Model), DeleteAfterRun: a.DeleteAfterRun, UsesMemory: a.UsesMemory}
	switch jt := str(a.JobType); jt {
	case "shell", "agent":
		r.JobType = jt
	case "":
		r.JobType = "shell"
		if strings.TrimSpace(str(a.Prompt)) != "" {
			r.JobType = "agent"
		}
	default:
		return errorf("Invalid job_type: %s", jt)
	}
	if r.JobType == "shell" {
		if strings.TrimSpace(str(a.Command)) == "" {
			return errorf("Missing 'command' for shell job")
		}
		r.Command = *a.Command
	} else {
		if strings.TrimSpace(str(a.Prompt)) == "" {
			return errorf("Missing 'prompt' for agent job")
		}
		r.Prompt = *a.Prompt
		if a.AllowedTools != nil && len(*a.AllowedTools) > 0 {
			r.AllowedTools = *a.AllowedTools
		}
	}
	if a.SessionTarget != nil {
		if err := checkTarget(*a.SessionTarget); err != nil {
			return errorf("%v", err)
		}
		r.SessionTarget = *a.SessionTarget
	}
	if r.Delivery, err = cronDeliveryArg(a.Delivery); err != nil {
		return errorf("%v", err)
	}
	j, err := env.Cron.Add(ctx, r)
	if err != nil {
		return errorf("%v", err)
	}
	v := jobView(j)
	return prettyJSON(struct {
		ID               string           `json:"id"`
		Name             *string          `json:"name"`
		JobType          string           `json:"job_type"`
		Schedule         api.CronSchedule `json:"schedule"`
		NextRun          string           `json:"next_run"`
		NextRunUTC       string           `json:"next_run_utc"`
		ScheduleTimezone *string          `json:"schedule_timezone"`
		TimezoneSource   string           `json:"timezone_source"`
		NextRunLocal     *string          `json:"next_run_local"`
		Enabled          bool             `json:"enabled"`
		AllowedTools     []string         `json:"allowed_tools"`
	}{j.ID, j.Name, j.JobType, j.Schedule, j.NextRun, v.NextRunUTC, v.ScheduleTimezone, v.TimezoneSource, v.NextRunLocal,
		j.Enabled, j.AllowedTools})
}

// cronSchedule reads a schedule argument: an object (or a string holding one), never a bare cron expression
// (upstream refuses those with the same explanation). after, when allowed, becomes an at schedule from now.
func cronSchedule(raw json.RawMessage, now time.Time, after bool) (api.CronSchedule, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return api.CronSchedule{}, fmt.Errorf("Missing 'schedule' parameter")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.CronSchedule{}, fmt.Errorf("Invalid schedule: %v", err)
		}
		if !strings.HasPrefix(strings.TrimSpace(s), "{") {
			return api.CronSchedule{}, fmt.Errorf(`Invalid schedule: expected a JSON object with a "kind" field, got plain string %s. `+
				`Use one of: {"kind":"cron","expr":"0 9 * * 1-5"}, {"kind":"at","at":"2026-12-31T23:59:00Z"}, `+
				`{"kind":"after","after_seconds":600} for a one-shot delay, or {"kind":"every","every_ms":3600000}`, quote(s))
		}
		raw = []byte(strings.TrimSpace(s))
	}
	var probe struct {
		Kind         string          `json:"kind"`
		AfterSeconds json.RawMessage `json:"after_seconds"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return api.CronSchedule{}, fmt.Errorf("Invalid schedule: %v", err)
	}
	if probe.Kind == "after" && after {
		var secs int64
		if err := json.Unmarshal(probe.AfterSeconds, &secs); err != nil || len(probe.AfterSeconds) == 0 {
			return api.CronSchedule{}, fmt.Errorf("Invalid schedule: after_seconds must be an integer > 0")
		}
		if secs <= 0 {
			return api.CronSchedule{}, fmt.Errorf("Invalid schedule: after_seconds must be > 0")
		}
		if secs > 100*365*24*3600 {
			return api.CronSchedule{}, fmt.Errorf("Invalid schedule: after_seconds is too large")
		}
		return api.CronSchedule{Kind: api.ScheduleAt, At: now.Add(time.Duration(secs) * time.Second).UTC().Format(time.RFC3339)}, nil
	}
	var sc api.CronSchedule
	if err := json.Unmarshal(raw, &sc); err != nil {
		return api.CronSchedule{}, fmt.Errorf("Invalid schedule: %v", err)
	}
	if sc.Kind == api.ScheduleAt {
		if _, err := time.Parse(time.RFC3339, sc.At); err != nil {
			return api.CronSchedule{}, fmt.Errorf("Invalid schedule: 'at' must be an RFC 3339 timestamp with Z or an explicit offset, "+
				"e.g. 2026-05-18T09:00:00Z or 2026-05-18T09:00:00-04:00; got %s", quote(sc.At))
		}
	}
	return sc, nil
}

func cronPatch(raw json.RawMessage) (CronPatch, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return CronPatch{}, fmt.Errorf("Missing 'patch' parameter")
	}
	if raw[0] == '"' { // a patch object sent as a string
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return CronPatch{}, fmt.Errorf("Invalid patch payload: %v", err)
		}
		raw = []byte(s)
	}
	var a cronArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return CronPatch{}, fmt.Errorf("Invalid patch payload: %v", err)
	}
	p := CronPatch{Name: a.Name, Command: a.Command, Prompt: a.Prompt, Model: a.Model, Enabled: a.Enabled,
		DeleteAfterRun: a.DeleteAfterRun, UsesMemory: a.UsesMemory, AllowedTools: a.AllowedTools}
	if a.SessionTarget != nil {
		if err := checkTarget(*a.SessionTarget); err != nil {
			return CronPatch{}, err
		}
		p.SessionTarget = a.SessionTarget
	}
	if len(bytes.TrimSpace(a.Schedule)) > 0 && !bytes.Equal(bytes.TrimSpace(a.Schedule), []byte("null")) {
		sc, err := cronSchedule(a.Schedule, time.Time{}, false)
		if err != nil {
			return CronPatch{}, fmt.Errorf("Invalid patch payload: %v", strings.TrimPrefix(err.Error(), "Invalid schedule: "))
		}
		p.Schedule = &sc
	}
	var err error
	if p.Delivery, err = cronDeliveryArg(a.Delivery); err != nil {
		return CronPatch{}, err
	}
	return p, nil
}

// checkTarget allows upstream's two session targets. A session id (which the cron/* methods accept) is not
// the model's to choose: the run would continue a session the model may not own.
func checkTarget(t string) error {
	if t != "isolated" && t != "main" {
		return fmt.Errorf("Invalid session_target: %s (want isolated or main)", quote(t))
	}
	return nil
}

func cronDeliveryArg(raw json.RawMessage) (*api.CronDelivery, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	d := api.CronDelivery{BestEffort: true}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("Invalid delivery config: %v", err)
	}
	return &d, nil
}

// cronJobView is a job as the cron tools show it: upstream's job JSON plus its time zone confirmation.
type cronJobView struct {
	api.CronJob
	AllowedTools     []string `json:"allowed_tools"`
	NextRunUTC       string   `json:"next_run_utc"`
	ScheduleTimezone *string  `json:"schedule_timezone"`
	TimezoneSource   string   `json:"timezone_source"`
	NextRunLocal     *string  `json:"next_run_local"`
}

// offsetTime is RFC 3339 with a numeric offset always (+00:00, never Z), as upstream's local times are written.
const offsetTime = "2006-01-02T15:04:05-07:00"

func jobView(j api.CronJob) cronJobView {
	v := cronJobView{CronJob: j, AllowedTools: j.AllowedTools, NextRunUTC: j.NextRun, TimezoneSource: "not_applicable"}
	if j.Schedule.Kind != api.ScheduleCron {
		return v
	}
	next, err := time.Parse(time.RFC3339Nano, j.NextRun)
	loc := time.Local
	if j.Schedule.TZ != "" {
		tz := j.Schedule.TZ
		v.ScheduleTimezone, v.TimezoneSource = &tz, "explicit"
		if loc, err = time.LoadLocation(tz); err != nil {
			return v
		}
	} else {
		s := "runtime local timezone"
		v.ScheduleTimezone, v.TimezoneSource = &s, "runtime_local"
	}
	if err == nil {
		s := next.In(loc).Format(offsetTime)
		v.NextRunLocal = &s
	}
	return v
}

func prettyJSON(v any) Result {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errorf("cron: %v", err)
	}
	return Result{Output: string(b)}
}

func truncateChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "..."
		}
		i++
	}
	return s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
