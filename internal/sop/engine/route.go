package engine

import (
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// route resolves the step after st's result res with the loader's rule (sop.ResolveNext, §1.6). It returns
// the next step, or end (a terminal status, or pending when the target's depends_on are unmet) with its
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
		reason = fmt.Sprintf("step %d waits for its depends_on steps", n.Step)
		evs = append(evs, e.event(r.RunID, "step_skipped", Principal{}, reason, map[string]any{"step": n.Step}))
		return int(n.Step), StatusPending, reason, evs
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
