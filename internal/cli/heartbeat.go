package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const heartbeatSynopsis = "runs [--limit N] [--json]"

// runHeartbeat shows the heartbeat through the running daemon (its run history is the daemon's).
func runHeartbeat(ctx context.Context, env Env, args []string) error {
	return group{name: "heartbeat", synopsis: heartbeatSynopsis, subs: []subcommand{sub("runs", heartbeatRuns)}}.run(ctx, env, args)
}

func heartbeatRuns(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "heartbeat runs", "[--limit N] [--json] [--config-dir DIR]")
	limit := fs.Int("limit", 20, "at most this many runs, newest first")
	asJSON := fs.Bool("json", false, "print the state and the runs as JSON")
	c, err := fs.connect(ctx, env, args, connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var res api.HeartbeatRunsResult
	if err := c.Call(ctx, api.MethodHeartbeatRuns, api.HeartbeatRunsParams{Limit: *limit}, &res); err != nil {
		return callError("heartbeat runs", err, nil)
	}
	if *asJSON {
		return printJSON(env, res)
	}
	h := res.Heartbeat
	loc := env.Locale()
	switch {
	case h.Problem != "":
		fmt.Fprintln(env.Stdout, loc.T("cli-heartbeat-problem", "problem", visible.Escape(h.Problem)))
	case !h.Enabled:
		fmt.Fprintln(env.Stdout, loc.T("cli-heartbeat-disabled"))
	default:
		fmt.Fprintln(env.Stdout, loc.T("cli-heartbeat-on", "agent", visible.Escape(h.Agent), "minutes", h.IntervalMinutes, "next", localTime(h.NextSlotAt)))
		if h.DeadmanAlertAt != "" {
			fmt.Fprintln(env.Stdout, loc.T("cli-heartbeat-deadman", "at", localTime(h.DeadmanAlertAt)))
		}
	}
	if len(res.Runs) == 0 {
		fmt.Fprintln(env.Stderr, loc.T("cli-no-runs"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLOT\tSTATUS\tPRIORITY\tTASK\tDURATION\tOUTPUT")
	for _, r := range res.Runs {
		task, prio := r.TaskText, r.TaskPriority
		if task == "" {
			task = "-"
		}
		if prio == "" {
			prio = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", localTime(r.SlotAt), r.Status, prio, visible.Escape(firstLine(task)),
			(time.Duration(r.DurationMS) * time.Millisecond).String(), visible.Escape(firstLine(r.Output)))
	}
	return tw.Flush()
}
