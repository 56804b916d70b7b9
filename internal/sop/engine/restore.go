package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// Restore loads the store at start: every active run comes back; a step that was in flight when the process
// died is marked interrupted (event step_interrupted) and then treated as a failed attempt, so it runs again
// only when its on_failure policy retries it, and the ledger says so. Executing runs get their claim renewed
// and are driven again; parked runs wait at their gate; stray claims are released. The newest terminal runs
// seed the finished window and the cooldowns.
func (e *Engine) Restore(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	terms, err := e.store.Terminal(ctx, 0)
	if err != nil {
		return fmt.Errorf("sop engine: restore: %w", err)
	}
	for i := len(terms) - 1; i >= 0; i-- {
		p, err := decode(terms[i])
		if err != nil {
			e.log.Warn("sop restore skipped a run", "run", terms[i].RunID, "err", err)
			continue
		}
		r := p.Run
		if r.Status == StatusCompleted && r.CompletedAt != nil {
			if t, err := time.Parse(time.RFC3339, *r.CompletedAt); err == nil && t.After(e.lastCompleted[r.SopName]) {
				e.lastCompleted[r.SopName] = t
			}
		}
		if r.TriggerEvent.Key != "" {
			e.rememberKeyLocked(dedupKey(r.SopName, r.TriggerEvent), r.RunID)
		}
		if e.set.MaxFinishedRuns <= 0 || len(terms)-i <= e.set.MaxFinishedRuns {
			var d *def
			if p.Sop != nil {
				d = newDef(*p.Sop)
			}
			e.addFinishedLocked(&r, d)
		}
	}
	acts, err := e.store.Active(ctx)
	if err != nil {
		return fmt.Errorf("sop engine: restore: %w", err)
	}
	keep := map[string]bool{}
	var drive []*runState
	for _, rec := range acts {
		p, err := decode(rec)
		if err != nil {
			e.log.Warn("sop restore skipped a run", "run", rec.RunID, "err", err)
			continue
		}
		d := e.defs[p.Run.SopName]
		if p.Sop != nil {
			d = newDef(*p.Sop)
		}
		if d == nil {
			e.log.Warn("sop restore: run's SOP is not loaded; it stays as it is", "run", rec.RunID, "sop", p.Run.SopName)
			continue
		}
		rs := &runState{run: p.Run, def: d, stored: p.Revision}
		e.active[rs.run.RunID] = rs
		e.restored++
		if rs.run.TriggerEvent.Key != "" {
			e.rememberKeyLocked(dedupKey(rs.run.SopName, rs.run.TriggerEvent), rs.run.RunID)
		}
		if r := &rs.run; r.Status == StatusPending && r.PendingReason != pendingApprovalCapacity {
			// Pending at unmet depends_on (stored before such a run failed): nothing would ever resume it.
			var results []sop.Result
			for _, x := range r.StepResults {
				results = append(results, sop.Result{Step: uint32(x.StepNumber), Status: sop.StepStatus(x.Status)})
			}
			e.failLocked(ctx, rs, StatusFailed, unmetDependsOn(rs.def.step(r.CurrentStep), results))
			continue
		}
		if rs.run.Status.Parked() || rs.run.Status == StatusPending {
			continue
		}
		keep[rs.run.RunID] = true
		if err := e.store.Renew(ctx, rs.run.RunID, rs.run.SopName, e.now()); err != nil {
			return fmt.Errorf("sop engine: restore: %w", err)
		}
		if f := rs.run.InFlight; f != nil {
			e.interruptLocked(ctx, rs)
		}
		if _, still := e.active[rs.run.RunID]; still {
			drive = append(drive, rs)
		}
	}
	claims, err := e.store.Claims(ctx)
	if err != nil {
		return fmt.Errorf("sop engine: restore: %w", err)
	}
	for _, c := range claims {
		if !keep[c.RunID] {
			if err := e.store.Release(ctx, c.RunID); err != nil {
				return fmt.Errorf("sop engine: restore: %w", err)
			}
		}
	}
	for _, rs := range drive {
		e.spawnLocked(rs)
	}
	return nil
}

// interruptLocked records the in-flight step of a restored run as interrupted: an event, a failed result
// saying why, and the on_failure routing (retry only if its policy allows).
func (e *Engine) interruptLocked(ctx context.Context, rs *runState) {
	r := &rs.run
	f := r.InFlight
	st := rs.def.step(f.Step)
	e.interrupted++
	now := iso(e.now())
	why := "interrupted: the daemon stopped while the step ran"
	ev := e.event(r.RunID, "step_interrupted", Principal{Kind: PrincipalSystem}, why,
		map[string]any{"step": f.Step, "attempt": f.Attempt, "session_id": f.SessionID})
	r.InFlight = nil
	r.StepResults = append(r.StepResults, StepResult{StepNumber: f.Step, Status: StepFailed, Output: why,
		StartedAt: f.StartedAt, CompletedAt: &now, Attempt: f.Attempt})
	if st == nil {
		e.failLocked(ctx, rs, StatusFailed, fmt.Sprintf("Step %d failed: %s", f.Step, why), ev)
		return
	}
	e.advanceLocked(ctx, rs, st, r.StepResults[len(r.StepResults)-1], ev)
}

// Tick is the maintenance pass (the daemon calls it every maintenance_interval_secs): approval timeouts,
// claim heartbeats, expired claims, prune. Runs whose step start could not be committed are driven again.
func (e *Engine) Tick(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	now := e.now()
	var due []*runState
	for _, rs := range e.active {
		r := &rs.run
		if r.Status == StatusWaitingApproval && e.set.ApprovalTimeout > 0 && r.WaitingSince != nil {
			if t, err := time.Parse(time.RFC3339, *r.WaitingSince); err == nil && now.Sub(t) >= e.set.ApprovalTimeout {
				due = append(due, rs)
			}
			continue
		}
		if r.Status == StatusRunning && !r.Status.Parked() {
			if err := e.store.Renew(ctx, r.RunID, r.SopName, now); err != nil {
				e.log.Warn("sop claim heartbeat failed", "run", r.RunID, "err", err)
			}
			if !rs.driving && r.InFlight == nil {
				e.spawnLocked(rs)
			}
		}
	}
	for _, rs := range due {
		e.timeoutLocked(ctx, rs)
	}
	// Runs whose gate waited for room in max_pending_approvals get it presented when there is room now.
	for _, rs := range e.active {
		if r := &rs.run; r.Status == StatusPending && r.PendingReason == pendingApprovalCapacity {
			if st := rs.def.step(r.CurrentStep); st != nil {
				if kind := e.gateKind(rs.def, st); kind != "" {
					e.parkLocked(ctx, rs, st, kind)
				}
			}
		}
	}
	if _, err := e.store.ReapExpired(ctx, now); err != nil {
		e.log.Warn("sop claim reap failed", "err", err)
	}
	if _, err := e.store.Prune(ctx, e.set.MaxFinishedRuns); err != nil {
		e.log.Warn("sop prune failed", "err", err)
	}
}

// timeoutLocked applies approval_timeout_action to a gate that waited too long. An unknown action cancels:
// a gate fails closed.
func (e *Engine) timeoutLocked(ctx context.Context, rs *runState) {
	r := &rs.run
	g := r.Gate
	step := 0
	if g != nil {
		step = g.Step
	}
	switch e.set.ApprovalTimeoutAction {
	case "escalate":
		now := iso(e.now())
		r.WaitingSince = &now
		if err := e.saveLocked(ctx, rs, e.event(r.RunID, "gate_escalated", Principal{Kind: PrincipalSystem}, "approval timeout",
			map[string]any{"step": step})); err != nil {
			e.log.Warn("sop escalation not persisted", "run", r.RunID, "err", err)
		}
		e.log.Warn("sop gate waiting past its timeout; escalated", "run", r.RunID, "step", step)
	case "auto_approve":
		_, _, err := e.decideLocked(ctx, r.SopName, r.RunID, Decision{Kind: Approve}, Principal{Kind: PrincipalSystem, ID: "timeout"})
		if err != nil {
			e.log.Warn("sop auto-approve failed", "run", r.RunID, "err", err)
		}
	default:
		e.failLocked(ctx, rs, StatusCancelled, "approval timeout (fail-closed cancel)",
			e.event(r.RunID, "gate_timed_out", Principal{Kind: PrincipalSystem}, "approval timeout", map[string]any{"step": step}))
	}
}
