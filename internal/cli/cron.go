package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const cronSynopsis = "list | add (--cron EXPR [--tz ZONE] | --at TIME | --every DURATION) (--command CMD | --prompt TEXT) " +
	"[--agent A] [--name N] | remove ID|NAME | runs ID|NAME [--limit N] | trigger ID|NAME"

// runCron manages scheduled jobs through the running daemon. It does not start one: a daemon started just for
// this would also run the jobs that are due, which a listing must not do.
func runCron(ctx context.Context, env Env, args []string) error {
	return group{name: "cron", synopsis: cronSynopsis, subs: []subcommand{
		sub("list", cronList), sub("add", cronAdd), sub("remove", cronRemove, "rm", "delete"), sub("runs", cronRuns),
		sub("trigger", cronTrigger, "run"),
	}}.run(ctx, env, args)
}

// jobHints answer a job that is not there (cron's not-found is -32602, as upstream's).
var jobHints = map[int]string{api.CodeInvalidParams: "cli-cron-job-hint"}

func cronList(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "cron list", "[--config-dir DIR] [--json]")
	configDir := configDirFlag(fs)
	asJSON := fs.Bool("json", false, "print the jobs as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	var res api.CronListResult
	c, err := connect(ctx, layout.Endpoint(env.Getenv), nil)
	switch {
	case errors.Is(err, errNoDaemon): // read the jobs without starting a daemon, which would run the due ones
		if res.Jobs, err = offlineCronJobs(ctx, layout); err != nil {
			return err
		}
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-offline-note"))
	case err != nil:
		return err
	default:
		defer c.Close()
		// cron/list answers a page at a time (api.MaxCronListLimit jobs at most) and says has_more.
		for offset := 0; ; {
			var page api.CronListResult
			if err := c.Call(ctx, api.MethodCronList, api.CronListParams{Limit: api.MaxCronListLimit, Offset: offset}, &page); err != nil {
				return callError("cron list", err, nil)
			}
			res.Jobs = append(res.Jobs, page.Jobs...)
			if !page.HasMore || page.NextOffset <= offset {
				break
			}
			offset = page.NextOffset
		}
	}
	if *asJSON {
		if res.Jobs == nil {
			res.Jobs = []api.CronJob{} // no jobs is an empty list, never null
		}
		return printJSON(env, res.Jobs)
	}
	if len(res.Jobs) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-cron-no-jobs"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tAGENT\tTYPE\tSCHEDULE\tNEXT RUN\tLAST\tENABLED")
	for _, j := range res.Jobs {
		name, last := "-", "-"
		if j.Name != nil && *j.Name != "" {
			name = *j.Name
		}
		if j.LastStatus != nil {
			last = *j.LastStatus
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%v\n", j.ID, name, j.AgentAlias, j.JobType, describeSchedule(j.Schedule),
			localTime(j.NextRun), last, j.Enabled)
	}
	return tw.Flush()
}

func describeSchedule(s api.CronSchedule) string {
	switch s.Kind {
	case api.ScheduleCron:
		if s.TZ != "" {
			return fmt.Sprintf("cron %q %s", s.Expr, s.TZ)
		}
		return fmt.Sprintf("cron %q", s.Expr)
	case api.ScheduleAt:
		return "at " + localTime(s.At)
	case api.ScheduleEvery:
		return "every " + (time.Duration(s.EveryMS) * time.Millisecond).String()
	}
	return s.Kind
}

func cronAdd(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "cron add", "(--cron EXPR [--tz ZONE] | --at TIME | --every DURATION) (--command CMD | --prompt TEXT) [--agent A] [--name N] [--config-dir DIR]")
	configDir := configDirFlag(fs)
	expr := fs.String("cron", "", `cron expression, e.g. "0 9 * * 1-5" (minute hour day month weekday)`)
	tz := fs.String("tz", "", "IANA time zone of --cron, e.g. Europe/Paris (default: the daemon host's)")
	at := fs.String("at", "", "run once: an RFC 3339 time, or a delay from now such as 20m or 2h")
	every := fs.Duration("every", 0, "run every DURATION, e.g. 30m")
	command := fs.String("command", "", "shell command, run in the agent's workspace under its risk profile")
	prompt := fs.String("prompt", "", "prompt of an agent job: each run is a turn in a fresh session")
	agent := fs.String("agent", "", "agent the job runs as (default: the only enabled agent)")
	name := fs.String("name", "", "a name for the job")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	var sched api.CronSchedule
	given := 0
	if *expr != "" {
		given++
		sched = api.CronSchedule{Kind: api.ScheduleCron, Expr: *expr, TZ: *tz}
	}
	if *at != "" {
		given++
		t, err := parseAtFlag(*at, time.Now())
		if err != nil {
			return err
		}
		sched = api.CronSchedule{Kind: api.ScheduleAt, At: t.UTC().Format(time.RFC3339Nano)}
	}
	if *every != 0 {
		given++
		sched = api.CronSchedule{Kind: api.ScheduleEvery, EveryMS: every.Milliseconds()}
	}
	if given != 1 {
		return hint.With(say("cli-cron-one-schedule"), `zeroclaw cron add --every 1h --command "make test"`)
	}
	if (*command == "") == (*prompt == "") {
		return hint.With(say("cli-cron-one-action"), `zeroclaw cron add --every 1h --command "make test"`)
	}
	c, err := connectRunning(ctx, env, *configDir)
	if err != nil {
		return err
	}
	defer c.Close()
	if *agent == "" {
		if *agent, err = onlyAgent(ctx, c, "cron add"); err != nil {
			return err
		}
	}
	raw, _ := json.Marshal(sched)
	params := api.CronAddParams{Agent: *agent, Schedule: raw, Command: *command, Prompt: *prompt, Name: *name}
	var job api.CronJob
	if err := c.Call(ctx, api.MethodCronAdd, params, &job); err != nil {
		return callError("cron add", err, map[int]string{api.CodeInvalidParams: "cli-cron-add-hint"})
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-cron-added", "id", job.ID, "schedule", describeSchedule(job.Schedule), "next", localTime(job.NextRun)))
	return nil
}

// parseAtFlag reads --at: an RFC 3339 time, or a delay such as 20m after now.
func parseAtFlag(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, say("cli-cron-at-not-positive", "value", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, hinted(say("cli-cron-at-invalid", "value", fmt.Sprintf("%q", s)), "cli-cron-at-invalid-hint")
	}
	return t, nil
}

// onlyAgent returns the only enabled agent, the default of --agent; op names the command in errors.
func onlyAgent(ctx context.Context, c *client.Conn, op string) (string, error) {
	var res api.AgentsListResult
	if err := c.Call(ctx, api.MethodAgentsList, struct{}{}, &res); err != nil {
		return "", callError(op, err, nil)
	}
	var enabled []string
	for _, a := range res.Agents {
		if a.Enabled {
			enabled = append(enabled, a.Alias)
		}
	}
	if len(enabled) != 1 {
		return "", hint.With(say("cli-cron-choose-agent", "op", op, "count", len(enabled), "agents", strings.Join(enabled, ", ")), "--agent NAME")
	}
	return enabled[0], nil
}

func cronRemove(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "cron remove", "ID|NAME [--config-dir DIR]")
	c, id, err := fs.connectWithID(ctx, env, args, "job id or name", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var res api.CronDeleteResult
	if err := c.Call(ctx, api.MethodCronDelete, api.CronIDParams{ID: id}, &res); err != nil {
		return callError("cron remove", err, jobHints)
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-cron-removed", "id", visible.Escape(res.ID)))
	return nil
}

func cronRuns(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "cron runs", "ID|NAME [--limit N] [--json] [--config-dir DIR]")
	limit := fs.Int("limit", 20, "at most this many runs, newest first")
	asJSON := fs.Bool("json", false, "print the runs as JSON")
	c, id, err := fs.connectWithID(ctx, env, args, "job id or name", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var res api.CronRunsResult
	if err := c.Call(ctx, api.MethodCronRuns, api.CronRunsParams{ID: id, Limit: *limit}, &res); err != nil {
		return callError("cron runs", err, jobHints)
	}
	if *asJSON {
		return printJSON(env, res.Runs)
	}
	if len(res.Runs) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-no-runs"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tSTATUS\tDURATION\tOUTPUT")
	for _, r := range res.Runs {
		dur, out := "-", ""
		if r.DurationMS != nil {
			dur = (time.Duration(*r.DurationMS) * time.Millisecond).String()
		}
		if r.Output != nil {
			out = firstLine(*r.Output)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", localTime(r.StartedAt), r.Status, dur, out)
	}
	return tw.Flush()
}

func cronTrigger(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "cron trigger", "ID|NAME [--config-dir DIR]")
	c, id, err := fs.connectWithID(ctx, env, args, "job id or name", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var res api.CronTriggerResult
	if err := c.Call(ctx, api.MethodCronTrigger, api.CronIDParams{ID: id}, &res); err != nil {
		return callError("cron trigger", err, jobHints)
	}
	fmt.Fprintln(env.Stdout, strings.TrimRight(res.Output, "\n"))
	if !res.Success {
		return &hint.Error{Err: say("cli-cron-job-failed", "id", id, "status", res.Status), Hint: "zeroclaw cron runs " + id}
	}
	return nil
}

// firstLine is s up to its first line break, marked when cut.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func printJSON(env Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
