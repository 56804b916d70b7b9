package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// TestTriggerFloodOfParkedRunsIsBounded: a supervised SOP parks every run at step 1 and a park holds no slot,
// so max_concurrent does not bound parked runs, and max_pending_approvals defaults to 0 (no cap). A peer that
// can deliver triggers (a webhook device, an MQTT publisher) with distinct idempotency keys must still not
// make the engine hold runs without bound: past MaxActiveRuns a trigger is deferred, admitting nothing.
func TestTriggerFloodOfParkedRunsIsBounded(t *testing.T) {
	set := Defaults()
	set.MaxActiveRuns = 20
	s := mkSop("flood", "supervised", 2)
	s.Triggers = []sop.Trigger{{Type: sop.SourceWebhook, Path: "/in"}}
	e := newEngine(t, runstore.NewMemory(), &turns{}, set, s)
	ctx := context.Background()
	started := 0
	for i := 0; i < 60; i++ {
		res, err := e.Dispatch(ctx, sop.Event{Source: sop.SourceWebhook, Topic: "/in", Payload: `{"n":1}`, Key: fmt.Sprintf("k%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 {
			t.Fatalf("results %+v", res)
		}
		switch res[0].Kind {
		case Started:
			started++
			waitStatus(t, e, res[0].RunID, StatusWaitingApproval)
		case Deferred:
			if res[0].Reason == "" {
				t.Fatalf("deferred without a reason: %+v", res[0])
			}
		default:
			t.Fatalf("trigger %d: %+v", i, res[0])
		}
	}
	if started != 20 {
		t.Fatalf("started %d runs, want exactly MaxActiveRuns (20)", started)
	}
	if n := len(e.Runs("flood")); n != 20 {
		t.Fatalf("engine holds %d runs, want 20", n)
	}
}

// TestRoutingLoopIsBoundedPerRun: max_step_visits bounds each step, so a loop through many steps records up
// to visits × steps results (256 × 256), each up to 64 KiB of output, and the whole run is rewritten at every
// step. A run stops at MaxRunResults step results in all, failed with the reason.
func TestRoutingLoopIsBoundedPerRun(t *testing.T) {
	set := Defaults()
	set.MaxRunResults = 30
	s := mkSop("loop", "auto", 3)
	back := uint32(1)
	s.Steps[2].Routing.Next = &back // 1 → 2 → 3 → 1 …
	e := newEngine(t, runstore.NewMemory(), &turns{}, set, s)
	res, err := e.Start(context.Background(), "loop", "", Principal{Kind: PrincipalCLI})
	if err != nil || res.Kind != Started {
		t.Fatalf("start: %+v %v", res, err)
	}
	r := waitStatus(t, e, res.RunID, StatusFailed, StatusCompleted, StatusCancelled)
	if r.Status != StatusFailed || len(r.StepResults) != 30 || !strings.Contains(r.FailureReason, "30 step results") {
		t.Fatalf("a loop ran to %s after %d results: %q", r.Status, len(r.StepResults), r.FailureReason)
	}
}

// TestUnmetDependsOnFailsTheRun: routing that reaches a step whose depends_on steps never produced output
// (1 → 3, and 3 depends on 2) cannot be resumed by anything (a run's steps come only from the run itself), so
// the run fails naming the step and the missing dependency instead of staying pending forever; so does a run
// a store holds pending that way (written before this rule) when the engine restores it.
func TestUnmetDependsOnFailsTheRun(t *testing.T) {
	ctx := context.Background()
	s := mkSop("dep", "auto", 3)
	three := uint32(3)
	s.Steps[0].Routing.Next = &three
	s.Steps[2].Routing.DependsOn = []uint32{2}
	st := runstore.NewMemory()
	e := newEngine(t, st, &turns{}, Defaults(), s)
	res, err := e.Start(ctx, "dep", "", Principal{Kind: PrincipalCLI})
	if err != nil || res.Kind != Started {
		t.Fatalf("start: %+v %v", res, err)
	}
	r := waitStatus(t, e, res.RunID, StatusFailed, StatusCompleted, StatusCancelled, StatusPending)
	if r.Status != StatusFailed || !strings.Contains(r.FailureReason, "step 3") || !strings.Contains(r.FailureReason, "depends_on step 2") {
		t.Fatalf("run = %s %q, want failed naming step 3 and its depends_on step 2", r.Status, r.FailureReason)
	}
	if len(r.StepResults) != 1 || r.StepResults[0].StepNumber != 1 {
		t.Fatalf("step results %+v, want step 1's only", r.StepResults)
	}

	// A run stored pending at step 3 (as the engine used to leave it) fails when restored.
	const id = "run-1700000000000000000-0009"
	js := `{"version":1,"revision":2,"run":{"run_id":"` + id + `","sop_name":"dep",` +
		`"trigger_event":{"source":"manual","topic":null,"payload":null,"timestamp":"2026-01-01T00:00:00Z"},` +
		`"frame_marker_id":"abc","status":"pending","current_step":3,"total_steps":3,"started_at":"2026-01-01T00:00:00Z",` +
		`"completed_at":null,"step_results":[{"step_number":1,"status":"completed","output":"ok",` +
		`"started_at":"2026-01-01T00:00:00Z","completed_at":"2026-01-01T00:00:01Z"}],"waiting_since":null,` +
		`"llm_calls_saved":0,"revision":0,"revision_base":0},"last_progress_at":"2026-01-01T00:00:01Z",` +
		`"redacted":false,"trigger_source":"manual"}`
	st2 := runstore.NewMemory()
	if err := st2.Save(ctx, runstore.Record{RunID: id, Revision: 2, LastProgressAt: "2026-01-01T00:00:01Z", JSON: []byte(js)}); err != nil {
		t.Fatal(err)
	}
	e2 := newEngine(t, st2, &turns{}, Defaults(), s)
	r2, active, err := e2.Run(id)
	if err != nil || active || r2.Status != StatusFailed || !strings.Contains(r2.FailureReason, "depends_on step 2") {
		t.Fatalf("restored pending run: %s active=%v %q %v, want failed naming depends_on step 2", r2.Status, active, r2.FailureReason, err)
	}
	if acts, _ := st2.Active(ctx); len(acts) != 0 {
		t.Fatalf("the store still holds %d active runs", len(acts))
	}
}
