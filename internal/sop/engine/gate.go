package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// gateKind says whether step st stops for a person before it runs: "checkpoint" for a checkpoint step (in
// every mode: upstream ignores it outside deterministic mode, we do not), "approval" when requires_confirmation
// is set (in every mode, deterministic included: upstream skips it there) or the step's mode, else the SOP's,
// asks for one (supervised: step 1; step_by_step: every step; priority_based: every step at high or critical
// priority, else step 1; auto and deterministic: never), "" otherwise.
func (e *Engine) gateKind(d *def, st *sop.Step) string {
	if st.Kind == sop.KindCheckpoint {
		return "checkpoint"
	}
	if st.RequiresConfirmation {
		return "approval"
	}
	mode := string(st.Mode)
	if mode == "" {
		mode = d.mode(e.set.DefaultExecutionMode)
	}
	first := d.first() == int(st.Number)
	switch mode {
	case "auto", "deterministic":
		return ""
	case "step_by_step":
		return "approval"
	case "priority_based":
		if d.Priority == sop.PriorityHigh || d.Priority == sop.PriorityCritical || first {
			return "approval"
		}
		return ""
	default: // supervised, and any unknown mode
		if first {
			return "approval"
		}
		return ""
	}
}

// parkLocked stops rs at st's gate: the state is committed, then the claim released (a park holds no slot).
func (e *Engine) parkLocked(ctx context.Context, rs *runState, st *sop.Step, kind string) {
	r := &rs.run
	prev := cloneRun(r)
	if max := int(rs.def.MaxPendingApprovals); max > 0 && e.parkedLocked(r.SopName, r.RunID) >= max {
		// The SOP's pool of runs waiting for a person is full: the run waits as pending (holding no slot)
		// until the maintenance tick finds room and presents its gate.
		if r.Status != StatusPending {
			r.Status, r.PendingReason = StatusPending, pendingApprovalCapacity
			if err := e.saveLocked(ctx, rs, e.event(r.RunID, "gate_deferred", Principal{}, "max_pending_approvals reached",
				map[string]any{"step": st.Number, "max_pending_approvals": max})); err != nil {
				*r = prev
				e.log.Warn("sop park not persisted", "run", r.RunID, "err", err)
				return
			}
			_ = e.store.Release(ctx, r.RunID)
		}
		return
	}
	r.PendingReason = ""
	rev := r.GatesShown // 0 for the run's first gate; every later gate gets a new revision
	now := iso(e.now())
	r.Revision, r.RevisionBase = rev, rev
	r.Status = StatusWaitingApproval
	if kind == "checkpoint" {
		r.Status = StatusPausedCheckpoint
	}
	r.WaitingSince = &now
	r.Gate = &Gate{Step: int(st.Number), Kind: kind, Revision: rev, Policy: st.Policy}
	if err := e.saveLocked(ctx, rs, e.event(r.RunID, "gate_presented", Principal{}, "", map[string]any{"step": st.Number,
		"kind": kind, "gate_revision": rev})); err != nil {
		*r = prev
		e.log.Warn("sop park not persisted", "run", r.RunID, "err", err)
		return
	}
	if err := e.store.Release(ctx, r.RunID); err != nil {
		e.log.Warn("sop claim release failed", "run", r.RunID, "err", err)
	}
}

// pendingApprovalCapacity is the PendingReason of a run whose gate waits for room in max_pending_approvals.
const pendingApprovalCapacity = "approval_capacity"

// parkedLocked counts the runs of sopName other than except that wait at a gate.
func (e *Engine) parkedLocked(sopName, except string) int {
	n := 0
	for id, rs := range e.active {
		if id != except && rs.run.SopName == sopName && rs.run.Status.Parked() {
			n++
		}
	}
	return n
}

// Decide answers the gate run id of SOP name waits at (sops/decide, sop_approve, the gateway). The caller
// has checked p's grant; Decide applies approval_mode, the step policy (group, quorum; a named policy that is
// not configured fails closed) and the gate binding. On success the returned overlay shows the new state.
func (e *Engine) Decide(ctx context.Context, name, id string, dec Decision, p Principal) (Outcome, Overlay, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.decideLocked(ctx, name, id, dec, p)
}

func (e *Engine) decideLocked(ctx context.Context, name, id string, dec Decision, p Principal) (Outcome, Overlay, error) {
	rs, ok := e.active[id]
	if !ok {
		for _, f := range e.finished {
			if f.RunID == id {
				if name != "" && f.SopName != name {
					return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: run '%s' belongs to SOP '%s', not '%s'", ErrWrongSOP, id, f.SopName, name)
				}
				ov, _ := e.overlayLocked("", id)
				return OutcomeAlreadyResolved, ov, nil
			}
		}
		return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: run '%s' not found", ErrNotFound, id)
	}
	r := &rs.run
	if name != "" && r.SopName != name {
		return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: run '%s' belongs to SOP '%s', not '%s'", ErrWrongSOP, id, r.SopName, name)
	}
	switch dec.Kind {
	case Approve, Deny, Amend, Revise:
	default:
		return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: %q", ErrInvalidDecision, dec.Kind)
	}
	if !r.Status.Parked() || r.Gate == nil {
		out := OutcomeNotWaiting
		if r.Status == StatusRunning {
			out = OutcomeAlreadyResolved
			ov, _ := e.overlayLocked("", id)
			return out, ov, nil
		}
		return out, Overlay{}, fmt.Errorf("%w: run '%s' is %s", ErrNotWaiting, id, r.Status)
	}
	g := r.Gate
	if (dec.Step != 0 && dec.Step != g.Step) || (dec.GateRevision != nil && *dec.GateRevision != g.Revision) {
		return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: run '%s' waits at step %d revision %d; the answer was for another gate", ErrGateMoved, id, g.Step, g.Revision)
	}
	switch e.set.ApprovalMode {
	case "out_of_band_required":
		if p.Kind == PrincipalAgent {
			return OutcomeRejectedSelfApproval, Overlay{}, fmt.Errorf("%w: approval_mode is out_of_band_required", ErrSelfApproval)
		}
	case "agent_tool":
		if p.Kind != PrincipalAgent && p.Kind != PrincipalSystem {
			return OutcomeNotAuthorized, Overlay{}, fmt.Errorf("%w: approval_mode is agent_tool", ErrNotAuthorized)
		}
	}
	if g.Kind == "approval" && (dec.Kind == Amend || dec.Kind == Revise) {
		return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: %s applies to a checkpoint, not an approval gate", ErrInvalidDecision, dec.Kind)
	}
	if dec.Kind == Revise {
		return OutcomeNotWaiting, Overlay{}, fmt.Errorf("%w: revise needs an llm.generate step before the checkpoint", ErrInvalidDecision)
	}
	quorum := 1
	if g.Policy != "" && p.Kind != PrincipalSystem {
		pol, ok := e.set.Policies[g.Policy]
		if !ok {
			return OutcomePolicyMissing, Overlay{}, fmt.Errorf("%w: step %d names policy '%s'", ErrPolicyMissing, g.Step, g.Policy)
		}
		if pol.RequiredGroup != "" && !e.member(pol.RequiredGroup, p) {
			return OutcomeNotAuthorized, Overlay{}, fmt.Errorf("%w: %s is not in group '%s'", ErrNotAuthorized, p, pol.RequiredGroup)
		}
		if pol.Quorum > 1 {
			quorum = pol.Quorum
		}
	}
	st := rs.def.step(g.Step)
	if dec.Kind == Deny {
		return e.denyLocked(ctx, rs, st, dec, p)
	}
	// Approve (or amend a checkpoint): count the vote first.
	key := p.voterKey()
	if !slices.Contains(g.Votes, key) {
		g.Votes = append(g.Votes, key)
	}
	if len(g.Votes) < quorum {
		if err := e.saveLocked(ctx, rs, e.event(id, "gate_vote", p, "", map[string]any{"step": g.Step, "source": string(p.Kind),
			"decision": string(dec.Kind), "gate_revision": g.Revision, "have": len(g.Votes), "need": quorum})); err != nil {
			g.Votes = g.Votes[:len(g.Votes)-1]
			return OutcomeNotWaiting, Overlay{}, err
		}
		ov, _ := e.overlayLocked("", id)
		return OutcomePendingQuorum, ov, nil
	}
	// The claim is reacquired under the caps before the gate changes.
	if _, ok, err := e.store.Claim(ctx, id, r.SopName, rs.def.maxConcurrent(), e.set.MaxConcurrentTotal, e.now()); err != nil {
		return OutcomeNotWaiting, Overlay{}, err
	} else if !ok {
		return OutcomeDeferredAtCapacity, Overlay{}, fmt.Errorf("%w: run '%s' cannot resume now", ErrAtCapacity, id)
	}
	prev := cloneRun(r)
	resolved := e.event(id, "gate_resolved", p, "", map[string]any{"step": g.Step, "source": string(p.Kind),
		"decision": string(dec.Kind), "gate_revision": g.Revision, "kind": g.Kind})
	r.Status, r.WaitingSince, r.Gate, r.GatesShown = StatusRunning, nil, nil, r.GatesShown+1
	if g.Kind == "checkpoint" {
		// A checkpoint is a step of its own: approving records it and routes on.
		now := iso(e.now())
		out := "approved by " + p.String()
		if dec.Kind == Amend {
			out = dec.Text
		}
		res := StepResult{StepNumber: g.Step, Status: StepCompleted, Output: capText(out), StartedAt: *prev.WaitingSince,
			CompletedAt: &now, Attempt: e.attempt(r, g.Step)}
		r.StepResults = append(r.StepResults, res)
		e.advanceLocked(ctx, rs, st, res, resolved)
	} else {
		r.ApprovedStep = g.Step
		if err := e.saveLocked(ctx, rs, resolved); err != nil {
			*r = prev
			_ = e.store.Release(ctx, id)
			return OutcomeNotWaiting, Overlay{}, err
		}
	}
	if _, still := e.active[id]; still && rs.run.Status == StatusRunning {
		e.spawnLocked(rs)
	}
	ov, _ := e.overlayLocked("", id)
	return OutcomeResumed, ov, nil
}

func (e *Engine) denyLocked(ctx context.Context, rs *runState, st *sop.Step, dec Decision, p Principal) (Outcome, Overlay, error) {
	r := &rs.run
	g := r.Gate
	resolved := e.event(r.RunID, "gate_resolved", p, dec.Reason, map[string]any{"step": g.Step, "source": string(p.Kind),
		"decision": "deny", "gate_revision": g.Revision, "kind": g.Kind})
	if g.Kind == "checkpoint" {
		// A denied checkpoint is a failed step, routed through on_failure (default: the run fails).
		now := iso(e.now())
		started := now
		if r.WaitingSince != nil {
			started = *r.WaitingSince
		}
		res := StepResult{StepNumber: g.Step, Status: StepFailed, Output: "checkpoint denied by operator", StartedAt: started,
			CompletedAt: &now, Attempt: e.attempt(r, g.Step)}
		r.Status, r.WaitingSince, r.Gate, r.GatesShown = StatusRunning, nil, nil, r.GatesShown+1
		r.StepResults = append(r.StepResults, res)
		denied := e.event(r.RunID, "checkpoint_denied", p, dec.Reason, map[string]any{"step": g.Step})
		e.advanceLocked(ctx, rs, st, res, resolved, denied)
		if _, still := e.active[r.RunID]; still && rs.run.Status == StatusRunning {
			if _, ok, err := e.store.Claim(ctx, r.RunID, r.SopName, rs.def.maxConcurrent(), e.set.MaxConcurrentTotal, e.now()); err == nil && ok {
				e.spawnLocked(rs)
			}
		}
		ov, _ := e.overlayLocked("", r.RunID)
		return OutcomeResumed, ov, nil
	}
	reason := dec.Reason
	if reason == "" {
		reason = "denied by " + p.String()
	}
	id := r.RunID
	if err := e.finishLocked(ctx, rs, StatusCancelled, reason, resolved); err != nil {
		return OutcomeNotWaiting, Overlay{}, err
	}
	ov, _ := e.overlayLocked("", id)
	return OutcomeDenied, ov, nil
}

func (e *Engine) member(group string, p Principal) bool {
	for _, m := range e.set.Groups[group] {
		if m == p.String() || (p.Kind != PrincipalChannel && m == p.ID && p.ID != "") {
			return true
		}
	}
	return false
}

// Cancel ends an active run as cancelled with reason (default "cancelled by <p>"). A step turn in flight is
// cancelled; the run is terminal when Cancel returns, the step recorded failed.
func (e *Engine) Cancel(ctx context.Context, id string, p Principal, reason string) (RunSummary, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs, ok := e.active[id]
	if !ok {
		if _, _, err := e.runLocked(id); err != nil {
			return RunSummary{}, err
		}
		return RunSummary{}, fmt.Errorf("%w: run '%s'", ErrNotActive, id)
	}
	if reason == "" {
		reason = "cancelled by " + p.String()
	}
	r := &rs.run
	evs := []runstore.Event{e.event(id, "run_cancel_requested", p, reason, nil)}
	if f := r.InFlight; f != nil {
		// The step in flight ends with the run: recorded failed, its outcome in the ledger like any other.
		now := iso(e.now())
		r.StepResults = append(r.StepResults, StepResult{StepNumber: f.Step, Status: StepFailed,
			Output: "cancelled: " + reason, StartedAt: f.StartedAt, CompletedAt: &now, Attempt: f.Attempt})
		evs = append(evs, e.event(id, "step_failed", p, "cancelled", map[string]any{"step": f.Step, "attempt": f.Attempt}))
	}
	if err := e.finishLocked(ctx, rs, StatusCancelled, reason, evs...); err != nil {
		return RunSummary{}, err
	}
	if rs.stepStop != nil {
		rs.stepStop()
	}
	return rs.run.Summary(false), nil
}

func (e *Engine) runLocked(id string) (*Run, bool, error) {
	if rs, ok := e.active[id]; ok {
		return &rs.run, true, nil
	}
	for _, f := range e.finished {
		if f.RunID == id {
			return f, false, nil
		}
	}
	return nil, false, fmt.Errorf("%w: run '%s' not found", ErrNotFound, id)
}

// Advance records the current step's result for a run the caller drives (sop_advance; runs started with
// Execute(external=true)). A parked run is refused and stays parked (#8678); so is a run the engine drives,
// and one another principal started (ErrNotDriver): only the agent that called sop_execute drives its run.
func (e *Engine) Advance(ctx context.Context, id string, status StepStatus, output string, p Principal) (RunSummary, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs, ok := e.active[id]
	if !ok {
		if _, _, err := e.runLocked(id); err != nil {
			return RunSummary{}, err
		}
		return RunSummary{}, fmt.Errorf("%w: run '%s'", ErrNotActive, id)
	}
	r := &rs.run
	if r.Status.Parked() {
		return RunSummary{}, fmt.Errorf("%w: run '%s' is %s at step %d; answer the gate instead", ErrNotWaiting, id, r.Status, r.CurrentStep)
	}
	if !r.ExternalDriver {
		return RunSummary{}, fmt.Errorf("%w: run '%s'", ErrDriven, id)
	}
	if r.StartedBy != p.String() {
		return RunSummary{}, fmt.Errorf("%w: run '%s' is driven by %s", ErrNotDriver, id, r.StartedBy)
	}
	switch status {
	case StepCompleted, StepFailed, StepSkipped:
	default:
		return RunSummary{}, fmt.Errorf("%w: status must be completed, failed or skipped", ErrInvalidPayload)
	}
	st := rs.def.step(r.CurrentStep)
	if st == nil {
		return RunSummary{}, fmt.Errorf("%w: step %d does not exist", ErrNotActive, r.CurrentStep)
	}
	if kind := e.gateKind(rs.def, st); kind != "" && r.ApprovedStep != int(st.Number) {
		e.parkLocked(ctx, rs, st, kind)
		return RunSummary{}, fmt.Errorf("%w: step %d needs approval first; the run now waits for it", ErrNotWaiting, st.Number)
	}
	now := iso(e.now())
	res := StepResult{StepNumber: int(st.Number), Status: status, Output: capText(output), StartedAt: now, CompletedAt: &now,
		EffectiveAgent: p.ID, Attempt: e.attempt(r, int(st.Number))}
	r.ApprovedStep = 0
	evs := []runstore.Event{e.event(id, "step_advanced", p, "", map[string]any{"step": st.Number, "status": string(status)})}
	if res.Status == StepCompleted {
		// sop_advance's output is checked against the step's output schema as the engine's own turns are.
		out, reason := e.checkOutput(st, res.Output)
		if reason != "" {
			res.Status, res.Output = StepFailed, reason
			evs = append(evs, e.schemaReject(r, st, "output", reason))
		} else {
			res.Output = out
		}
	}
	r.StepResults = append(r.StepResults, res)
	e.advanceLocked(ctx, rs, st, res, evs...)
	if cur, still := e.active[id]; still {
		e.handOverLocked(ctx, cur) // the next step's gate, before the caller is told to do it
		return cur.run.Summary(true), nil
	}
	return rs.run.Summary(false), nil
}
