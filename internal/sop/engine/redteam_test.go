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
