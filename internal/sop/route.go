package sop

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// StepStatus is a recorded step's outcome.
type StepStatus string

// Step outcomes.
const (
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
)

// Result is one recorded step execution, the part of a run's step_results routing reads.
type Result struct {
	Step   uint32
	Status StepStatus
	Output string
}

// NextKind is what happens after a recorded step.
type NextKind int

// Routing decisions.
const (
	NextStep     NextKind = iota // dispatch Next.Step
	NextRetry                    // run the same step again
	NextComplete                 // the run is completed
	NextFail                     // the run fails with Next.Reason
	NextWait                     // Next.Step's depends_on are not all met: the run goes pending
)

// Next is a routing decision.
type Next struct {
	Kind   NextKind
	Step   uint32
	Reason string
}

func (n Next) String() string {
	switch n.Kind {
	case NextStep:
		return fmt.Sprintf("step %d", n.Step)
	case NextRetry:
		return "retry"
	case NextComplete:
		return "complete"
	case NextWait:
		return fmt.Sprintf("wait %d", n.Step)
	}
	return "fail: " + n.Reason
}

// RouteInput is what ResolveNext decides from.
type RouteInput struct {
	Sop        *Sop
	Current    uint32   // the step just recorded
	TotalSteps uint32   // the run's total_steps
	Results    []Result // every recorded step, oldest first, including the one just recorded
	MaxVisits  uint32   // [sop] max_step_visits
	MaxRetries uint32   // [sop] max_step_retries
}

// ResolveNext decides what follows the step just recorded (the last of in.Results), as upstream's
// route_decision_after_recorded_step and resolve_next:
//  1. It failed: on_failure decides (fail: "Step N failed: <output>"; retry while retries < min(max,
//     MaxRetries), then "step retry limit reached"; goto N).
//  2. Its `when` is false: terminal completes, otherwise the linear successor (switch and next ignored).
//  3. A switch: the first port whose `when` holds wins (no goto: fail); no port: complete.
//  4. next: that step (missing: fail); else terminal completes; else linear (past the last: complete).
//  5. Every target is bounded by MaxVisits and waits while its depends_on lack output.
func ResolveNext(in RouteInput) Next {
	cur := in.Sop.stepByNumber(in.Current)
	last := Result{Step: in.Current, Status: StepCompleted}
	if n := len(in.Results); n > 0 {
		last = in.Results[n-1]
	}
	if last.Status == StepFailed {
		if cur == nil {
			return Next{Kind: NextFail, Reason: fmt.Sprintf("Step %d failed: %s", in.Current, last.Output)}
		}
		var failed uint32
		for _, r := range in.Results {
			if r.Step == in.Current && r.Status == StepFailed {
				failed++
			}
		}
		retries := uint32(0)
		if failed > 0 {
			retries = failed - 1
		}
		n := RouteFailure(cur.OnFailure, retries, in.MaxRetries)
		if n.Kind == NextFail && n.Reason == "step failed" {
			n.Reason = fmt.Sprintf("Step %d failed: %s", in.Current, last.Output)
		}
		if n.Kind == NextStep {
			return in.target(n.Step, true)
		}
		return n
	}
	if cur == nil {
		return Next{Kind: NextComplete}
	}
	payload := in.payload()
	if cur.Routing.When != "" && !EvalConditionString(cur.Routing.When, payload) {
		if cur.Routing.Terminal {
			return Next{Kind: NextComplete}
		}
		return in.target(in.Current+1, false)
	}
	if len(cur.Routing.Switch) > 0 {
		for _, r := range cur.Routing.Switch {
			if r.When != "" && !EvalConditionString(r.When, payload) {
				continue
			}
			if r.Goto == nil {
				return Next{Kind: NextFail, Reason: fmt.Sprintf("switch port '%s' has no target", r.Name)}
			}
			return in.target(*r.Goto, true)
		}
		return Next{Kind: NextComplete}
	}
	if cur.Routing.Next != nil {
		return in.target(*cur.Routing.Next, true)
	}
	if cur.Routing.Terminal {
		return Next{Kind: NextComplete}
	}
	return in.target(in.Current+1, false)
}

// RouteFailure applies a failed step's on_failure: retries consumed so far against min(max, maxRetries).
func RouteFailure(f Failure, retriesConsumed, maxRetries uint32) Next {
	switch f.Action {
	case FailRetry:
		if retriesConsumed < min(f.Max, maxRetries) {
			return Next{Kind: NextRetry}
		}
		return Next{Kind: NextFail, Reason: "step retry limit reached"}
	case FailGoto:
		return Next{Kind: NextStep, Step: f.Step}
	}
	return Next{Kind: NextFail, Reason: "step failed"}
}

func (in RouteInput) target(n uint32, explicit bool) Next {
	st := in.Sop.stepByNumber(n)
	if st == nil {
		if !explicit && n > in.TotalSteps {
			return Next{Kind: NextComplete}
		}
		return Next{Kind: NextFail, Reason: fmt.Sprintf("step %d does not exist", n)}
	}
	var visits uint32
	for _, r := range in.Results {
		if r.Step == n {
			visits++
		}
	}
	if visits >= in.MaxVisits {
		return Next{Kind: NextFail, Reason: fmt.Sprintf("step %d visit limit reached", n)}
	}
	done := in.outputs()
	for _, d := range st.Routing.DependsOn {
		if _, ok := done[d]; !ok {
			return Next{Kind: NextWait, Step: n}
		}
	}
	return Next{Kind: NextStep, Step: n}
}

// outputs are the outputs of completed steps, the latest per step (upstream's RunData).
func (in RouteInput) outputs() map[uint32]string {
	out := map[uint32]string{}
	for _, r := range in.Results {
		if r.Status == StepCompleted {
			out[r.Step] = r.Output
		}
	}
	return out
}

// payload is {"steps":{"<n>":<output>}} that step guards are evaluated against; an output that is JSON is
// embedded as JSON, any other as a string.
func (in RouteInput) payload() string { return RunDataPayload(in.outputs()) }

// RunDataPayload renders step outputs as the guard payload {"steps":{"<n>": output}}.
func RunDataPayload(outputs map[uint32]string) string {
	keys := make([]uint32, 0, len(outputs))
	for k := range outputs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var b strings.Builder
	b.WriteString(`{"steps":{`)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(strconv.FormatUint(uint64(k), 10)))
		b.WriteByte(':')
		v := strings.TrimSpace(outputs[k])
		if json.Valid([]byte(v)) && v != "" {
			b.Write(compactJSON([]byte(v)))
		} else {
			q, _ := json.Marshal(outputs[k])
			b.Write(q)
		}
	}
	b.WriteString("}}")
	return b.String()
}

func (s *Sop) stepByNumber(n uint32) *Step {
	for i := range s.Steps {
		if s.Steps[i].Number == n {
			return &s.Steps[i]
		}
	}
	return nil
}

// StepByNumber returns the step numbered n.
func (s *Sop) StepByNumber(n uint32) (Step, bool) {
	if st := s.stepByNumber(n); st != nil {
		return *st, true
	}
	return Step{}, false
}
