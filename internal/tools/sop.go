package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// SOP tool names (upstream's).
const (
	NameSopList    = "sop_list"
	NameSopExecute = "sop_execute"
	NameSopAdvance = "sop_advance"
	NameSopApprove = "sop_approve"
	NameSopStatus  = "sop_status"
)

// SOPs is the SOP engine as the sop_* tools reach it, acting as the agent whose turn calls them (upstream's
// principal agent(<alias>)): the engine applies approval_mode to that principal, so an agent cannot clear a
// gate the configuration keeps for people. Its errors are shown to the model as they are. The daemon
// implements it over internal/sop/engine; this package only describes what the tools need.
type SOPs interface {
	// List returns the loaded SOPs, sorted by name, with their active run counts.
	List(ctx context.Context) ([]SOPInfo, error)
	// Execute starts SOP name with payload (JSON text, "" for none) without a trigger match, as upstream's
	// sop_execute; the calling agent drives it step by step with Advance.
	Execute(ctx context.Context, name, payload string) (api.SopRun, error)
	// Advance records the current step's result (completed, failed or skipped) and moves the run on. A run
	// parked at a gate is refused and stays parked (upstream's #8678).
	Advance(ctx context.Context, runID, status, output string) (api.SopRun, error)
	// Approve clears the gate the run waits at, as the agent.
	Approve(ctx context.Context, runID string) (outcome string, run api.SopRun, err error)
	// Run is one run; Runs the runs of sop ("" = all), newest first.
	Run(ctx context.Context, runID string) (api.SopRun, error)
	Runs(ctx context.Context, sop string) ([]api.SopRunSummary, error)
	// Prompt is the context of the step the run stands at, with the trigger payload framed as untrusted data,
	// as the engine hands it to its own step turns.
	Prompt(ctx context.Context, runID string) (string, error)
}

// SOPInfo is one loaded SOP as sop_list shows it.
type SOPInfo struct {
	Name, Description, Priority string
	Steps                       int
	Triggers                    []string
	ActiveRuns                  int
}

func isSopTool(name string) bool {
	switch name {
	case NameSopList, NameSopExecute, NameSopAdvance, NameSopApprove, NameSopStatus:
		return true
	}
	return false
}

// sopWrite reports whether a sop tool starts, steers or clears a run (medium risk: asked under supervised,
// refused under readonly); sop_list and sop_status only read.
func sopWrite(name string) bool {
	return name == NameSopExecute || name == NameSopAdvance || name == NameSopApprove
}

func buildSopSpecs() []Spec {
	return []Spec{
		{Name: NameSopList, Description: "List all loaded Standard Operating Procedures (SOPs) with their triggers, priority, step count, and active run count. Optionally filter by name or priority.",
			Parameters: []byte(`{"type":"object","properties":{"filter":{"type":"string","description":"Filter SOPs by name substring or priority (low/normal/high/critical)"}}}`)},
		{Name: NameSopExecute, Description: "Manually trigger a Standard Operating Procedure (SOP) by name. Returns the run ID and first step instruction. Use sop_list to see available SOPs.",
			Parameters: []byte(`{"type":"object","properties":{"name":{"type":"string","description":"Name of the SOP to execute"},"payload":{"type":"string","description":"Optional trigger payload (JSON string)"}},"required":["name"]}`)},
		{Name: NameSopAdvance, Description: "Report the result of the current SOP step and advance to the next step. Provide the run_id, whether the step succeeded or failed, and a brief output summary.",
			Parameters: []byte(`{"type":"object","properties":{"run_id":{"type":"string","description":"The run ID to advance"},"status":{"type":"string","enum":["completed","failed","skipped"],"description":"Result status of the current step"},"output":{"type":"string","description":"Brief summary of what happened in this step"}},"required":["run_id","status","output"]}`)},
		{Name: NameSopApprove, Description: "Approve a pending SOP step that is waiting for operator approval. Returns the step instruction to execute. Use sop_status to see which runs are waiting.",
			Parameters: []byte(`{"type":"object","properties":{"run_id":{"type":"string","description":"The run ID to approve"}},"required":["run_id"]}`)},
		{Name: NameSopStatus, Description: "Query SOP execution status. Provide run_id for a specific run, or sop_name to list runs for that SOP. With no arguments, shows all active runs.",
			Parameters: []byte(`{"type":"object","properties":{"run_id":{"type":"string","description":"Specific run ID to query"},"sop_name":{"type":"string","description":"SOP name to list runs for"},"include_metrics":{"type":"boolean","description":"Include aggregated SOP metrics (completion rate, deviation rate, intervention counts, windowed variants)"},"include_gate_status":{"type":"boolean","description":"Include trust phase and gate evaluation status"}}}`)},
	}
}

type sopArgs struct {
	Filter  *string `json:"filter"`
	Name    *string `json:"name"`
	Payload *string `json:"payload"`
	RunID   *string `json:"run_id"`
	Status  *string `json:"status"`
	Output  *string `json:"output"`
	SopName *string `json:"sop_name"`
	Metrics *bool   `json:"include_metrics"`
}

// parseSop decodes and checks a sop tool's arguments (the policy classifies only calls that parse).
func parseSop(call Call) (sopArgs, error) {
	var a sopArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return a, fmt.Errorf("%s: %w", call.Name, err)
	}
	need := func(p *string, name string) error {
		if p == nil || strings.TrimSpace(*p) == "" {
			return fmt.Errorf("%s: %w: missing required argument %q", call.Name, errBadArguments, name)
		}
		return nil
	}
	switch call.Name {
	case NameSopExecute:
		return a, need(a.Name, "name")
	case NameSopAdvance:
		for _, f := range []struct {
			p    *string
			name string
		}{{a.RunID, "run_id"}, {a.Status, "status"}, {a.Output, "output"}} {
			if f.name == "output" {
				if f.p == nil {
					return a, fmt.Errorf("%s: %w: missing required argument %q", call.Name, errBadArguments, "output")
				}
				continue
			}
			if err := need(f.p, f.name); err != nil {
				return a, err
			}
		}
		if !slices.Contains([]string{api.SopStepCompleted, api.SopStepFailed, api.SopStepSkipped}, *a.Status) {
			return a, fmt.Errorf("%s: %w: status must be completed, failed or skipped, not %q", call.Name, errBadArguments, *a.Status)
		}
	case NameSopApprove:
		return a, need(a.RunID, "run_id")
	}
	return a, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func runSop(ctx context.Context, env Env, call Call) Result {
	if env.SOPs == nil {
		return errorf("%s: the SOP subsystem is not enabled ([sop] sops_dir)", call.Name)
	}
	a, err := parseSop(call)
	if err != nil {
		return errorf("%v", err)
	}
	s := env.SOPs
	switch call.Name {
	case NameSopList:
		return sopList(ctx, s, deref(a.Filter))
	case NameSopExecute:
		run, err := s.Execute(ctx, *a.Name, deref(a.Payload))
		if err != nil {
			return errorf("%s: %v", call.Name, err)
		}
		return Result{Output: "SOP run started: " + run.RunID + "\n\n" + sopNext(ctx, s, run)}
	case NameSopAdvance:
		run, err := s.Advance(ctx, *a.RunID, *a.Status, *a.Output)
		if err != nil {
			return errorf("%s: %v", call.Name, err)
		}
		return Result{Output: fmt.Sprintf("Step recorded (%s).\n\n%s", *a.Status, sopNext(ctx, s, run))}
	case NameSopApprove:
		outcome, run, err := s.Approve(ctx, *a.RunID)
		if err != nil {
			return errorf("%s: %v", call.Name, err)
		}
		return Result{Output: fmt.Sprintf("Approval %s for run %s.\n\n%s", outcome, run.RunID, sopNext(ctx, s, run))}
	case NameSopStatus:
		res := sopStatus(ctx, s, deref(a.RunID), deref(a.SopName))
		if a.Metrics != nil && *a.Metrics && !res.IsError {
			res.Output += sopMetrics(ctx, s, deref(a.SopName))
		}
		return res
	}
	return errorf("%s: unknown tool", call.Name)
}

func sopList(ctx context.Context, s SOPs, filter string) Result {
	sops, err := s.List(ctx)
	if err != nil {
		return errorf("%s: %v", NameSopList, err)
	}
	if len(sops) == 0 {
		return Result{Output: "No SOPs loaded."}
	}
	f := strings.ToLower(filter)
	var shown []SOPInfo
	for _, sp := range sops {
		if f == "" || strings.Contains(strings.ToLower(sp.Name), f) || sp.Priority == f {
			shown = append(shown, sp)
		}
	}
	if len(shown) == 0 {
		return Result{Output: fmt.Sprintf("No SOPs match filter '%s'.", filter)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Loaded SOPs (%d total, %d shown):\n\n", len(sops), len(shown))
	for _, sp := range shown {
		active := ""
		if sp.ActiveRuns > 0 {
			active = fmt.Sprintf(" (active runs: %d)", sp.ActiveRuns)
		}
		fmt.Fprintf(&b, "- **%s** [%s] — %d steps, %d trigger(s): %s%s\n", sp.Name, sp.Priority, sp.Steps, len(sp.Triggers),
			strings.Join(sp.Triggers, ", "), active)
		if sp.Description != "" {
			fmt.Fprintf(&b, "  %s\n", sp.Description)
		}
	}
	return Result{Output: b.String()}
}

// sopNext tells the agent where the run stands and what to do next: the step to carry out, the gate it waits
// at (someone else must clear it), or how it ended.
func sopNext(ctx context.Context, s SOPs, run api.SopRun) string {
	switch run.Status {
	case api.SopRunCompleted:
		return fmt.Sprintf("SOP '%s' run %s completed.", run.SopName, run.RunID)
	case api.SopRunFailed, api.SopRunCancelled:
		return fmt.Sprintf("SOP '%s' run %s %s: %s", run.SopName, run.RunID, run.Status, run.FailureReason)
	case api.SopRunWaitingApproval, api.SopRunPausedCheckpoint:
		return fmt.Sprintf("Run %s waits for approval of step %d of %d. Do not carry the step out: an operator approves it "+
			"(zeroclaw sop approve %s), or sop_approve when approval_mode allows an agent to.", run.RunID, run.CurrentStep, run.TotalSteps, run.RunID)
	}
	prompt, err := s.Prompt(ctx, run.RunID)
	if err != nil {
		return fmt.Sprintf("Run %s is %s at step %d of %d.", run.RunID, run.Status, run.CurrentStep, run.TotalSteps)
	}
	return prompt + "\n\nReport it with sop_advance (run_id " + run.RunID + ", status completed, failed or skipped, and a short output)."
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func sopStatus(ctx context.Context, s SOPs, runID, sop string) Result {
	if runID != "" {
		run, err := s.Run(ctx, runID)
		if err != nil {
			return errorf("%s: %v", NameSopStatus, err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Run %s (SOP '%s'): %s, step %d of %d, started %s", run.RunID, run.SopName, run.Status, run.CurrentStep,
			run.TotalSteps, run.StartedAt)
		if run.CompletedAt != nil {
			fmt.Fprintf(&b, ", ended %s", *run.CompletedAt)
		}
		if run.FailureReason != "" {
			fmt.Fprintf(&b, "\nReason: %s", run.FailureReason)
		}
		if run.Gate != nil {
			fmt.Fprintf(&b, "\nGate: %s at step %d", run.Gate.Kind, run.Gate.Step)
		}
		for _, r := range run.StepResults {
			fmt.Fprintf(&b, "\n- step %d %s: %s", r.StepNumber, r.Status, firstLineOf(r.Output))
		}
		return Result{Output: b.String()}
	}
	runs, err := s.Runs(ctx, sop)
	if err != nil {
		return errorf("%s: %v", NameSopStatus, err)
	}
	var shown []api.SopRunSummary
	for _, r := range runs {
		if sop != "" || r.Active {
			shown = append(shown, r)
		}
	}
	if len(shown) == 0 {
		if sop != "" {
			return Result{Output: fmt.Sprintf("No runs of SOP '%s'.", sop)}
		}
		return Result{Output: "No active SOP runs."}
	}
	var b strings.Builder
	for _, r := range shown {
		fmt.Fprintf(&b, "- %s (SOP '%s'): %s, step %d of %d\n", r.RunID, r.SopName, r.Status, r.CurrentStep, r.TotalSteps)
	}
	return Result{Output: b.String()}
}

// sopMetrics is sop_status's include_metrics: the outcome counts of the runs the engine holds (active and
// retained finished ones) and the completion rate of the finished ones.
func sopMetrics(ctx context.Context, s SOPs, sop string) string {
	runs, err := s.Runs(ctx, sop)
	if err != nil {
		return ""
	}
	n := map[string]int{}
	for _, r := range runs {
		n[r.Status]++
	}
	finished := n[api.SopRunCompleted] + n[api.SopRunFailed] + n[api.SopRunCancelled]
	rate := "n/a"
	if finished > 0 {
		rate = fmt.Sprintf("%.2f", float64(n[api.SopRunCompleted])/float64(finished))
	}
	return fmt.Sprintf("\nMetrics: %d runs held; completed %d, failed %d, cancelled %d, active %d; completion rate %s",
		len(runs), n[api.SopRunCompleted], n[api.SopRunFailed], n[api.SopRunCancelled], len(runs)-finished, rate)
}
