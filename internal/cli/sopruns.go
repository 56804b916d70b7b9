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
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// The run verbs of `zeroclaw sop`, through the running daemon (a daemon started for them would hold none of
// its runs): run, runs, show, pending, approve, deny, cancel.

const sopRunSynopsis = "run NAME [--payload JSON] [--wait] | runs [--sop NAME] | show RUN | pending | approve RUN [--step N] | deny RUN [--reason TEXT] [--step N] | cancel RUN [--reason TEXT]"

// sopRunSubs are the run verbs of the sop group.
func sopRunSubs() []subcommand {
	return []subcommand{
		sub("run", sopRun, "start"), sub("runs", sopRunsList), sub("show", sopShow, "status"), sub("pending", sopPendingList),
		sub("approve", sopApprove), sub("deny", sopDeny, "reject"), sub("cancel", sopCancel),
	}
}

// runSop is `zeroclaw sop`.
func runSop(ctx context.Context, env Env, args []string) error {
	return group{name: "sop", synopsis: sopAuthorSynopsis + " | " + sopRunSynopsis, subs: append(sopAuthorSubs(), sopRunSubs()...)}.run(ctx, env, args)
}

// sopHints answer the daemon's SOP errors with the next command to try.
var sopHints = map[int]string{
	api.CodeInvalidParams: "cli-sop-run-hint",
	api.CodeAuthRequired:  "cli-sop-gate-hint",
	api.CodeInternalError: "cli-sop-internal-hint",
}

func sopRun(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sop run", "NAME [--payload JSON] [--wait] [--config-dir DIR]")
	payload := fs.String("payload", "", "the step-1 input, as JSON text (the trigger payload)")
	wait := fs.Bool("wait", false, "wait until the run finishes, printing each change (a gate waits for an approver)")
	c, name, err := fs.connectWithID(ctx, env, args, "SOP name", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	p := api.SopRunParams{Name: name}
	if *payload != "" {
		if !json.Valid([]byte(*payload)) {
			return &hint.Error{Err: say("cli-sop-bad-payload"), Hint: `zeroclaw sop run ` + name + ` --payload '{"key":"value"}'`}
		}
		p.Payload = payload
	}
	var res api.SopRunResult
	if err := c.Call(ctx, api.MethodSopsRun, p, &res); err != nil {
		return callError("sop run", err, map[int]string{api.CodeInvalidParams: "cli-sop-manual-hint",
			api.CodeInternalError: sopHints[api.CodeInternalError]})
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-sop-started", "run", visible.Escape(res.RunID)))
	if !*wait {
		return nil
	}
	return sopWait(ctx, env, c, res.RunID)
}

// sopWait follows a run until it is terminal, printing each status it passes through; at a gate it says how
// to answer it. A failed or cancelled run is an error (exit 1).
func sopWait(ctx context.Context, env Env, c *client.Conn, runID string) error {
	last := ""
	for {
		var run api.SopRun
		if err := c.Call(ctx, api.MethodSopsRunGet, api.SopRunIDParams{RunID: runID}, &run); err != nil {
			return callError("sop run", err, sopHints)
		}
		if now := fmt.Sprintf("%s/%d", run.Status, run.CurrentStep); now != last {
			last = now
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-sop-progress", "status", run.Status, "step", run.CurrentStep, "total", run.TotalSteps))
			if run.Status == api.SopRunWaitingApproval || run.Status == api.SopRunPausedCheckpoint {
				fmt.Fprintln(env.Stdout, "  "+env.Locale().T("cli-sop-waiting", "run", visible.Escape(runID)))
			}
		}
		switch run.Status {
		case api.SopRunCompleted:
			return nil
		case api.SopRunFailed, api.SopRunCancelled:
			reason := run.FailureReason
			if reason == "" {
				reason = string(run.Status)
			}
			return &hint.Error{Err: fmt.Errorf("run %s %s: %s", runID, run.Status, visible.Escape(reason)), Hint: "zeroclaw sop show " + runID}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func sopRunsList(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sop runs", "[--sop NAME] [--json] [--config-dir DIR]")
	sop := fs.String("sop", "", "only the runs of this SOP")
	asJSON := fs.Bool("json", false, "print the runs as JSON")
	c, err := fs.connect(ctx, env, args, connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var p api.SopRunsParams
	if *sop != "" {
		p.Sop = sop
	}
	var res api.SopRunsResult
	if err := c.Call(ctx, api.MethodSopsRuns, p, &res); err != nil {
		return callError("sop runs", err, sopHints)
	}
	if *asJSON {
		return printJSON(env, res.Runs)
	}
	if len(res.Runs) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-sop-no-runs"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSOP\tSTATUS\tSTEP\tTRIGGER\tSTARTED\tREASON")
	for _, r := range res.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", visible.Escape(r.RunID), visible.Escape(r.SopName), r.Status,
			r.CurrentStep, r.TotalSteps, visible.Escape(r.TriggerSource), localTime(r.StartedAt), firstLine(visible.Escape(r.FailureReason)))
	}
	return tw.Flush()
}

func sopShow(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sop show", "RUN [--json] [--config-dir DIR]")
	asJSON := fs.Bool("json", false, "print the run as JSON")
	c, id, err := fs.connectWithID(ctx, env, args, "run id", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var run api.SopRun
	if err := c.Call(ctx, api.MethodSopsRunGet, api.SopRunIDParams{RunID: id}, &run); err != nil {
		return callError("sop show", err, sopHints)
	}
	if *asJSON {
		return printJSON(env, run)
	}
	w, loc := env.Stdout, env.Locale()
	rows := []labelled{
		{"cli-sop-show-run", visible.Escape(run.RunID)},
		{"cli-sop-show-sop", visible.Escape(run.SopName)},
		{"cli-sop-show-status", loc.T("cli-sop-show-status-value", "status", run.Status, "step", run.CurrentStep, "total", run.TotalSteps)},
		{"cli-sop-show-trigger", visible.Escape(run.TriggerEvent.Source)},
	}
	if run.StartedBy != "" {
		rows = append(rows, labelled{"cli-sop-show-by", visible.Escape(run.StartedBy)})
	}
	if run.SopRevision != "" {
		rows = append(rows, labelled{"cli-sop-show-rev", visible.Escape(run.SopRevision)})
	}
	if run.InFlight != nil {
		rows = append(rows, labelled{"cli-sop-show-running", loc.T("cli-sop-show-running-value", "step", run.InFlight.Step,
			"try", run.InFlight.Attempt, "since", localTime(run.InFlight.StartedAt))})
	}
	if run.PendingReason != "" {
		rows = append(rows, labelled{"cli-sop-show-pending", visible.Escape(run.PendingReason)})
	}
	rows = append(rows, labelled{"cli-sop-show-started", localTime(run.StartedAt)})
	if run.CompletedAt != nil {
		rows = append(rows, labelled{"cli-sop-show-ended", localTime(*run.CompletedAt)})
	}
	if run.FailureReason != "" {
		rows = append(rows, labelled{"cli-sop-show-reason", visible.Escape(run.FailureReason)})
	}
	if run.Gate != nil {
		rows = append(rows, labelled{"cli-sop-show-gate", loc.T("cli-sop-show-gate-value", "kind", run.Gate.Kind, "step", run.Gate.Step,
			"run", visible.Escape(run.RunID))})
	}
	printLabelled(w, loc, "", 2, sopShowLabels, rows)
	if len(run.StepResults) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tTRY\tSTATUS\tAGENT\tTOOLS\tOUTPUT")
	for _, s := range run.StepResults {
		agent := s.EffectiveAgent
		if agent == "" {
			agent = "-"
		}
		tries := max(s.Attempt, 1)
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%s\n", s.StepNumber, tries, s.Status, visible.Escape(agent), len(s.ToolCalls),
			firstLine(visible.Escape(s.Output)))
	}
	return tw.Flush()
}

// sopShowLabels are the labels of sop show's record, all of them (see printLabelled).
var sopShowLabels = []string{"cli-sop-show-run", "cli-sop-show-sop", "cli-sop-show-status", "cli-sop-show-trigger", "cli-sop-show-by",
	"cli-sop-show-rev", "cli-sop-show-running", "cli-sop-show-pending", "cli-sop-show-started", "cli-sop-show-ended",
	"cli-sop-show-reason", "cli-sop-show-gate"}

func sopPendingList(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sop pending", "[--json] [--config-dir DIR]")
	asJSON := fs.Bool("json", false, "print the runs as JSON")
	c, err := fs.connect(ctx, env, args, connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var res api.SopPendingResult
	if err := c.Call(ctx, api.MethodSopsPending, struct{}{}, &res); err != nil {
		return callError("sop pending", err, sopHints)
	}
	if *asJSON {
		return printJSON(env, res.Pending)
	}
	if len(res.Pending) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-sop-none-pending"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSOP\tSTEP\tKIND\tWAITING SINCE")
	for _, p := range res.Pending {
		since := "-"
		if p.WaitingSince != nil {
			since = localTime(*p.WaitingSince)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", visible.Escape(p.RunID), visible.Escape(p.SopName), p.Step, p.TotalSteps, p.Kind, since)
	}
	return tw.Flush()
}

func sopApprove(ctx context.Context, env Env, args []string) error {
	return sopResolve(ctx, env, args, "approve", api.MethodSopsApprove)
}

func sopDeny(ctx context.Context, env Env, args []string) error {
	return sopResolve(ctx, env, args, "deny", api.MethodSopsDeny)
}

func sopResolve(ctx context.Context, env Env, args []string, verb, method string) error {
	synopsis := "RUN [--step N] [--config-dir DIR]"
	if verb == "deny" {
		synopsis = "RUN [--reason TEXT] [--step N] [--config-dir DIR]"
	}
	fs := newDaemonFlags(env, "sop "+verb, synopsis)
	step := fs.Uint("step", 0, "only if the run waits at this step (what zeroclaw sop pending showed); 0: whatever gate it waits at")
	var reason *string
	if verb == "deny" {
		reason = fs.String("reason", "", "why (recorded in the run's ledger and shown as its failure reason)")
	}
	c, id, err := fs.connectWithID(ctx, env, args, "run id", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	p := api.SopResolveParams{RunID: id}
	if reason != nil && *reason != "" {
		p.Reason = reason
	}
	if *step > 0 {
		s := uint32(*step)
		p.Step = &s
	}
	var res api.SopResolveResult
	if err := c.Call(ctx, method, p, &res); err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == api.CodeInvalidParams {
			return callError("sop "+verb, err, map[int]string{api.CodeInvalidParams: "cli-sop-pending-hint"})
		}
		return callError("sop "+verb, err, sopHints)
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", visible.Escape(res.RunID), strings.ReplaceAll(res.Outcome, "_", " "))
	return nil
}

func sopCancel(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sop cancel", "RUN [--reason TEXT] [--config-dir DIR]")
	reason := fs.String("reason", "", "why (shown as the run's failure reason)")
	c, id, err := fs.connectWithID(ctx, env, args, "run id", connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var run api.SopRun
	if err := c.Call(ctx, api.MethodSopsCancel, api.SopCancelParams{RunID: id, Reason: *reason}, &run); err != nil {
		return callError("sop cancel", err, sopHints)
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", visible.Escape(run.RunID), run.Status)
	return nil
}
