package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// maxKeys bounds the dedup index of trigger keys.
const maxKeys = 4096

// Dispatch is the trigger fan-in: ev goes to every loaded SOP with a matching trigger, each admitted on its
// own (§4.3). A SOP that does not match gives no result; no SOP matching gives one NoMatch. A duplicate
// delivery (same non-empty Key as an earlier admitted event) is Coalesced into the run it started.
func (e *Engine) Dispatch(ctx context.Context, in sop.Event) ([]Result, error) {
	ev := Event{Source: string(in.Source), Timestamp: iso(e.now()), Key: in.Key, Fresh: in.Fresh}
	if in.Topic != "" {
		t := in.Topic
		ev.Topic = &t
	}
	if in.Payload != "" {
		p := in.Payload
		ev.Payload = &p
	}
	ev = e.capEvent(ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if why := e.screen(&ev); why != "" {
		e.log.Warn("sop trigger blocked by the untrusted-input guard", "source", ev.Source, "reason", why)
		return []Result{{Kind: BlockedUnsafe, Reason: why}}, nil
	}
	var out []Result
	for _, d := range e.sortedDefsLocked() {
		if !e.matches(d, ev) {
			continue
		}
		res, err := e.admitLocked(ctx, d, ev, Principal{Kind: PrincipalSystem, ID: ev.Source}, false)
		if err != nil {
			res = Result{Kind: Skipped, SopName: d.Name, Reason: err.Error()}
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		out = append(out, Result{Kind: NoMatch})
	}
	return out, nil
}

// Start is a manual run of SOP name (sops/run, the CLI, the gateway): the SOP must have a manual trigger.
// payload is the raw payload text ("" = none). The run is driven to a terminal state or a gate.
func (e *Engine) Start(ctx context.Context, name, payload string, p Principal) (Result, error) {
	return e.start(ctx, name, payload, p, true, false)
}

// Execute starts SOP name without a trigger match (the sop_execute tool, as upstream). external makes the
// caller the driver: the engine executes nothing and waits for Advance.
func (e *Engine) Execute(ctx context.Context, name, payload string, p Principal, external bool) (Result, error) {
	return e.start(ctx, name, payload, p, false, external)
}

func (e *Engine) start(ctx context.Context, name, payload string, p Principal, manual, external bool) (Result, error) {
	ev := Event{Source: "manual", Timestamp: iso(e.now())}
	if payload != "" {
		ev.Payload = &payload
	}
	ev = e.capEvent(ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return Result{}, ErrClosed
	}
	d := e.defs[name]
	if d == nil {
		if manual {
			return Result{}, fmt.Errorf("%w: SOP '%s' has no matching manual trigger", ErrNoManualTrigger, name)
		}
		return Result{}, fmt.Errorf("%w: SOP '%s'", ErrSOPNotFound, name)
	}
	if manual && !e.matches(d, ev) {
		return Result{}, fmt.Errorf("%w: SOP '%s' has no matching manual trigger", ErrNoManualTrigger, name)
	}
	return e.admitLocked(ctx, d, ev, p, external)
}

func (e *Engine) matches(d *def, ev Event) bool {
	for _, t := range d.Triggers {
		if sop.Match(t, sop.Source(ev.Source), ev.Topic, ev.Payload) {
			return true
		}
	}
	return false
}

func (e *Engine) sortedDefsLocked() []*def {
	names := make([]string, 0, len(e.defs))
	for n := range e.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*def, len(names))
	for i, n := range names {
		out[i] = e.defs[n]
	}
	return out
}

// capEvent cuts topic and payload to PayloadMaxBytes at a UTF-8 boundary (untrusted input).
func (e *Engine) capEvent(ev Event) Event {
	max := e.set.PayloadMaxBytes
	if max <= 0 {
		return ev
	}
	cut := func(s *string) *string {
		if s == nil || len(*s) <= max {
			return s
		}
		b := (*s)[:max]
		for len(b) > 0 && !utf8.ValidString(b) {
			b = b[:len(b)-1]
		}
		return &b
	}
	ev.Topic, ev.Payload = cut(ev.Topic), cut(ev.Payload)
	return ev
}

// admitLocked applies §4.3 to one SOP and, when admitted, claims a slot, commits the new run and starts its
// driver. e.mu is held.
func (e *Engine) admitLocked(ctx context.Context, d *def, ev Event, p Principal, external bool) (Result, error) {
	res := Result{SopName: d.Name}
	if ev.Key != "" && !ev.Fresh {
		if id, ok := e.keys[dedupKey(d.Name, ev)]; ok {
			res.Kind, res.RunID, res.Reason = Coalesced, id, "duplicate delivery of trigger event "+ev.Key
			return res, nil
		}
	}
	if d.CooldownSecs > 0 {
		if t, ok := e.lastCompleted[d.Name]; ok && e.now().Sub(t).Seconds() < float64(d.CooldownSecs) {
			res.Kind, res.Reason = Skipped, fmt.Sprintf("SOP '%s' is cooling down (%ds after its last completed run)", d.Name, d.CooldownSecs)
			return res, nil
		}
	}
	if len(d.Steps) == 0 {
		return res, fmt.Errorf("%w: SOP '%s' has no steps defined", ErrNoSteps, d.Name)
	}
	if max := e.set.MaxActiveRuns; max > 0 && len(e.active) >= max {
		res.Kind, res.Reason = Deferred, fmt.Sprintf("the SOP engine holds %d active runs (its limit); answer or cancel some first", len(e.active))
		return res, nil
	}
	per, total, err := e.store.ClaimCounts(ctx, d.Name)
	if err != nil {
		return res, err
	}
	parked, executing := 0, 0
	var first *runState
	for _, rs := range e.active {
		if rs.run.SopName != d.Name {
			continue
		}
		if first == nil || rs.run.StartedAt < first.run.StartedAt {
			first = rs
		}
		if rs.run.Status.Parked() || rs.run.Status == StatusPending {
			parked++
		} else {
			executing++
		}
	}
	policy := string(d.AdmissionPolicy)
	if d.MaxPendingApprovals > 0 && parked >= int(d.MaxPendingApprovals) {
		if policy == "drop" {
			res.Kind, res.Reason = Skipped, fmt.Sprintf("SOP '%s' has %d runs waiting for approval (max_pending_approvals)", d.Name, parked)
		} else {
			res.Kind, res.Reason = Deferred, fmt.Sprintf("SOP '%s' has %d runs waiting for approval (max_pending_approvals)", d.Name, parked)
		}
		return res, nil
	}
	free := per < d.maxConcurrent() && total < e.set.MaxConcurrentTotal
	busy := fmt.Sprintf("SOP '%s' is at capacity (%d of %d running, %d of %d in total)", d.Name, per, d.maxConcurrent(), total, e.set.MaxConcurrentTotal)
	switch policy {
	case "hold", "coalesce":
		if free && executing == 0 && parked == 0 && per == 0 {
			break
		}
		if policy == "coalesce" && first != nil {
			res.Kind, res.RunID, res.Reason = Coalesced, first.run.RunID, "coalesced into the active run"
			return res, nil
		}
		res.Kind, res.Reason = Deferred, busy
		return res, nil
	case "drop":
		if !free {
			res.Kind, res.Reason = Skipped, busy
			return res, nil
		}
	default: // parallel
		if !free {
			res.Kind, res.Reason = Deferred, busy
			return res, nil
		}
	}
	rs := e.newRunLocked(d, ev, p, external)
	_, ok, err := e.store.Claim(ctx, rs.run.RunID, d.Name, d.maxConcurrent(), e.set.MaxConcurrentTotal, e.now())
	if err != nil {
		return res, err
	}
	if !ok {
		res.Kind, res.Reason = Deferred, busy
		return res, nil
	}
	e.active[rs.run.RunID] = rs
	if err := e.saveLocked(ctx, rs, e.event(rs.run.RunID, "run_started", p, "", map[string]any{"source": ev.Source,
		"sop_revision": rs.run.SopRevision})); err != nil {
		delete(e.active, rs.run.RunID)
		_ = e.store.Release(ctx, rs.run.RunID)
		return res, err
	}
	if ev.Key != "" {
		if _, seen := e.keys[dedupKey(d.Name, ev)]; seen && ev.Fresh {
			e.keys[dedupKey(d.Name, ev)] = rs.run.RunID // a reused id: the key now names this run
		}
		e.rememberKeyLocked(dedupKey(d.Name, ev), rs.run.RunID)
	}
	e.log.Info("sop run started", "run", rs.run.RunID, "sop", d.Name, "source", ev.Source)
	e.spawnLocked(rs)
	res.Kind, res.RunID = Started, rs.run.RunID
	return res, nil
}

// dedupKey is the index key of a delivery: at most one run per SOP, source and key.
func dedupKey(sopName string, ev Event) string { return sopName + "\x00" + ev.Source + "\x00" + ev.Key }

func (e *Engine) rememberKeyLocked(k, id string) {
	if _, ok := e.keys[k]; ok {
		return
	}
	e.keys[k] = id
	e.keyOrder = append(e.keyOrder, k)
	if len(e.keyOrder) > maxKeys {
		delete(e.keys, e.keyOrder[0])
		e.keyOrder = e.keyOrder[1:]
	}
}

func (e *Engine) newRunLocked(d *def, ev Event, p Principal, external bool) *runState {
	prefix := "run"
	if d.mode(e.set.DefaultExecutionMode) == "deterministic" {
		prefix = "det"
	}
	id := fmt.Sprintf("%s-%d-%04d", prefix, e.clk.Now().UnixNano(), e.counter.Add(1)%10000)
	var m [8]byte
	_, _ = rand.Read(m[:])
	// Definitions are never changed in place (Reload makes new ones), so the run can share d.
	return &runState{def: d, run: Run{RunID: id, SopName: d.Name, TriggerEvent: ev, FrameMarkerID: hex.EncodeToString(m[:]),
		Status: StatusRunning, CurrentStep: d.first(), TotalSteps: len(d.Steps), StartedAt: iso(e.now()),
		StepResults: []StepResult{}, SopRevision: d.rev, StartedBy: p.String(), ExternalDriver: external}}
}
