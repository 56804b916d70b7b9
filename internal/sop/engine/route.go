package engine

import (
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// route resolves the step after st's result res (§1.6). It returns the next step, or end (a terminal status)
// with its reason, plus the ledger events the decision adds.
func (e *Engine) route(rs *runState, st *Step, res StepResult) (next int, end RunStatus, reason string, evs []runstore.Event) {
	r := &rs.run
	d := rs.def
	if res.Status == StepFailed {
		of := OnFailure{Kind: "fail"}
		if st.OnFailure != nil {
			of = *st.OnFailure
		}
		switch of.Kind {
		case "retry":
			limit := of.N
			if e.set.MaxStepRetries < limit {
				limit = e.set.MaxStepRetries
			}
			if failures(r, st.Number)-1 < limit {
				evs = append(evs, e.event(r.RunID, "step_retry", Principal{}, "", map[string]any{"step": st.Number,
					"retries_consumed": failures(r, st.Number), "max": limit}))
				next = st.Number
			} else {
				return 0, StatusFailed, fmt.Sprintf("Step %d failed: step retry limit reached: %s", st.Number, res.Output), evs
			}
		case "goto":
			next = of.N
		default:
			return 0, StatusFailed, fmt.Sprintf("Step %d failed: %s", st.Number, res.Output), evs
		}
	} else {
		rt := st.Routing
		if rt == nil {
			rt = &Routing{}
		}
		data := stepsData(r)
		switch {
		case rt.When != "" && !e.cond(rt.When, data):
			if rt.Terminal {
				return 0, StatusCompleted, "", evs
			}
			next = e.linear(d, st.Number)
		case len(rt.Switch) > 0:
			found := false
			for _, p := range rt.Switch {
				if p.When != "" && !e.cond(p.When, data) {
					continue
				}
				if p.Goto == nil {
					return 0, StatusFailed, fmt.Sprintf("switch port '%s' has no target", p.Name), evs
				}
				next, found = *p.Goto, true
				break
			}
			if !found {
				return 0, StatusCompleted, "", evs
			}
		case rt.Next != nil:
			next = *rt.Next
		case rt.Terminal:
			return 0, StatusCompleted, "", evs
		default:
			next = e.linear(d, st.Number)
		}
	}
	if next == 0 {
		return 0, StatusCompleted, "", evs
	}
	if d.step(next) == nil {
		return 0, StatusFailed, fmt.Sprintf("step %d does not exist", next), evs
	}
	if visits(r, next) >= e.set.MaxStepVisits {
		return 0, StatusFailed, fmt.Sprintf("step %d visit limit reached", next), evs
	}
	return next, "", "", evs
}

// linear is the step after n in file order, 0 past the last.
func (e *Engine) linear(d *Def, n int) int {
	for i := range d.Steps {
		if d.Steps[i].Number == n && i+1 < len(d.Steps) {
			return d.Steps[i+1].Number
		}
	}
	return 0
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

func visits(r *Run, n int) int {
	c := 0
	for _, res := range r.StepResults {
		if res.StepNumber == n {
			c++
		}
	}
	return c
}
