package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// persisted is upstream's PersistedRun envelope plus "sop", the definition the run started with (so a
// restart keeps the revision a run began with). Upstream reads the fields it knows and ignores "sop".
type persisted struct {
	Version        int      `json:"version"`
	Revision       uint64   `json:"revision"`
	Run            Run      `json:"run"`
	LastProgressAt string   `json:"last_progress_at"`
	Redacted       bool     `json:"redacted"`
	TriggerSource  string   `json:"trigger_source"`
	Sop            *sop.Sop `json:"sop,omitempty"`
}

func (e *Engine) record(rs *runState) (runstore.Record, error) {
	p := persisted{Version: runstore.Version, Revision: rs.stored + 1, Run: rs.run, LastProgressAt: iso(e.now()),
		TriggerSource: rs.run.TriggerEvent.Source, Sop: &rs.def.Sop}
	b, err := json.Marshal(p)
	if err != nil {
		return runstore.Record{}, fmt.Errorf("sop engine: encode run %s: %w", rs.run.RunID, err)
	}
	return runstore.Record{RunID: rs.run.RunID, SopName: rs.run.SopName, Revision: p.Revision,
		LastProgressAt: p.LastProgressAt, JSON: b}, nil
}

func decode(r runstore.Record) (persisted, error) {
	var p persisted
	if err := json.Unmarshal(r.JSON, &p); err != nil {
		return p, fmt.Errorf("sop engine: decode run %s: %w", r.RunID, err)
	}
	if p.Version != runstore.Version {
		return p, fmt.Errorf("sop engine: run %s has envelope version %d, want %d", r.RunID, p.Version, runstore.Version)
	}
	p.Revision = r.Revision
	return p, nil
}

func (e *Engine) event(runID, kind string, actor Principal, reason string, payload map[string]any) runstore.Event {
	b, _ := json.Marshal(payload)
	if payload == nil {
		b = []byte("{}")
	}
	a := ""
	if actor.Kind != "" {
		a = actor.String()
	}
	return runstore.Event{RunID: runID, TS: iso(e.now()), Kind: kind, Actor: a, Reason: reason, Payload: b}
}

// saveLocked commits an active run's state with evs; only after it returns nil is the transition visible
// (published, acknowledged). e.mu is held: the store is fast and this keeps one order of writes per run.
func (e *Engine) saveLocked(ctx context.Context, rs *runState, evs ...runstore.Event) error {
	rec, err := e.record(rs)
	if err != nil {
		return err
	}
	if err := e.store.Save(ctx, rec, evs...); err != nil {
		return fmt.Errorf("sop engine: persist run %s: %w", rs.run.RunID, err)
	}
	rs.stored = rec.Revision
	e.publishLocked(rs.run.Summary(true))
	return nil
}

// finishLocked makes rs terminal in one transaction (state, claim release, events) and moves it to the
// finished window. On a store error the run stays active in memory with its previous state, and the error
// is returned.
func (e *Engine) finishLocked(ctx context.Context, rs *runState, status RunStatus, reason string, evs ...runstore.Event) error {
	prev := cloneRun(&rs.run)
	now := iso(e.now())
	rs.run.Status = status
	rs.run.CompletedAt = &now
	rs.run.WaitingSince = nil
	rs.run.InFlight = nil
	rs.run.Gate = nil
	if status != StatusCompleted {
		rs.run.FailureReason = reason
	}
	kind := "run_" + string(status)
	evs = append(evs, e.event(rs.run.RunID, kind, Principal{}, reason, map[string]any{"step": rs.run.CurrentStep}))
	rec, err := e.record(rs)
	if err == nil {
		rec.Terminal = true
		err = e.store.Finish(ctx, rec, evs...)
	}
	if err != nil {
		rs.run = prev
		return fmt.Errorf("sop engine: finish run %s: %w", rs.run.RunID, err)
	}
	rs.stored = rec.Revision
	delete(e.active, rs.run.RunID)
	r := rs.run
	e.addFinishedLocked(&r, rs.def)
	if status == StatusCompleted {
		e.lastCompleted[r.SopName] = e.now()
	}
	e.publishLocked(r.Summary(false))
	e.log.Info("sop run finished", "run", r.RunID, "sop", r.SopName, "status", string(status), "reason", reason)
	return nil
}

func (e *Engine) addFinishedLocked(r *Run, d *def) {
	e.finished = append(e.finished, r)
	if d != nil {
		e.finishedDefs[r.RunID] = d
	}
	if m := e.set.MaxFinishedRuns; m > 0 && len(e.finished) > m {
		for _, old := range e.finished[:len(e.finished)-m] {
			delete(e.finishedDefs, old.RunID)
		}
		e.finished = append([]*Run(nil), e.finished[len(e.finished)-m:]...)
	}
}
