package engine

import (
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// route resolves the step after st's result res with the loader's rule (sop.ResolveNext, §1.6). It returns
// the next step, or end (a terminal status; failed too when the target's depends_on are unmet) with its
// reason, plus the ledger events the decision adds.
func (e *Engine) route(rs *runState, st *sop.Step, res StepResult) (next int, end RunStatus, reason string, evs []runstore.Event) {
	r := &rs.run
	results := make([]sop.Result, 0, len(r.StepResults))
	for _, x := range r.StepResults {
		results = append(results, sop.Result{Step: uint32(x.StepNumber), Status: sop.StepStatus(x.Status), Output: x.Output})
	}
	n := sop.ResolveNext(sop.RouteInput{Sop: &rs.def.Sop, Current: st.Number, TotalSteps: uint32(len(rs.def.Steps)),
		Results: results, MaxVisits: uint32(e.set.MaxStepVisits), MaxRetries: uint32(max(e.set.MaxStepRetries, 0))})
	switch n.Kind {
	case sop.NextStep:
		return int(n.Step), "", "", nil
	case sop.NextRetry:
		evs = append(evs, e.event(r.RunID, "step_retry", Principal{}, "", map[string]any{"step": st.Number,
			"retries_consumed": failures(r, int(st.Number)) - 1}))
		return int(st.Number), "", "", evs
	case sop.NextComplete:
		return 0, StatusCompleted, "", nil
	case sop.NextWait:
		// A run's step results come only from the run itself, so a dependency that has not completed by the
		// time routing reaches its dependent never will: parking the run pending would hold it forever.
		reason = unmetDependsOn(rs.def.step(int(n.Step)), results)
		evs = append(evs, e.event(r.RunID, "step_skipped", Principal{}, reason, map[string]any{"step": n.Step}))
		return 0, StatusFailed, reason, evs
	}
	reason = n.Reason
	if reason == "step retry limit reached" {
		reason = fmt.Sprintf("Step %d failed: step retry limit reached: %s", st.Number, res.Output)
	}
	return 0, StatusFailed, reason, nil
}

func failures(r *Run, n int) int {
	c := 0
	for _, res := range r.StepResults {
		if res.StepNumber == n && res.Status == StepFailed {
			c++
		}
	}
	return c
}

// unmetDependsOn is the failure reason for routing that reached st while some of its depends_on steps have
// no completed result.
func unmetDependsOn(st *sop.Step, results []sop.Result) string {
	if st == nil {
		return "routing reached a step that does not exist"
	}
	done := map[uint32]bool{}
	for _, x := range results {
		if x.Status == sop.StepCompleted {
			done[x.Step] = true
		}
	}
	var missing []string
	for _, d := range st.Routing.DependsOn {
		if !done[d] {
			missing = append(missing, fmt.Sprint(d))
		}
	}
	return fmt.Sprintf("step %d cannot run: its depends_on step %s never completed in this run", st.Number, strings.Join(missing, ", "))
}
