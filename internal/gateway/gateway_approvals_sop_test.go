package gateway_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The SOP gates in the cross-session approvals: a device with sops:read sees a run parked at its gate, offered
// no decision without sops:approve and refused if it answers; the owner is offered approve and deny, a tool
// decision is not offered for a gate, approve resumes the run (the engine's outcome), the spent id is 404,
// and a deny with a reason cancels a second run.
func TestApprovalsSopGates(t *testing.T) {
	t.Parallel()
	d, g, owner := startSopGateway(t)
	runner := rpctest.PairWithProfile(t, d, g, "runner")
	json := "Content-Type: application/json"
	gate := func(auth, run string) map[string]any {
		t.Helper()
		var found map[string]any
		got, gates := listApprovals(t, g, auth)
		for _, a := range got {
			if a["kind"] == "sop" && a["run_id"] == run {
				found = a
			}
		}
		if gates != "listed" || found == nil {
			t.Fatalf("run %s is not listed (%q): %v", run, gates, got)
		}
		return found
	}

	id := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, runner, json).Want(t, 200).Body["run_id"].(string)
	waitRun(t, g, runner, id, "waiting_approval")
	seen := gate(runner, id)
	if len(seen["decisions"].([]any)) != 0 || seen["sop_name"] != "deploy" || seen["gate_kind"] != "approval" || seen["step"] != float64(1) {
		t.Fatalf("the runner's view of the gate %v", seen)
	}
	if r := g.Do("POST", "/api/approvals/"+seen["id"].(string), map[string]any{"decision": "approve"}, runner, json); r.Code != 403 {
		t.Fatalf("the runner approving: %d %s", r.Code, r.Raw)
	}
	mine := gate(owner, id)
	if dec := mine["decisions"].([]any); len(dec) != 2 || dec[0] != "approve" || dec[1] != "deny" {
		t.Fatalf("the owner is offered %v", dec)
	}
	if r := g.Do("POST", "/api/approvals/"+mine["id"].(string), map[string]any{"decision": "allow_once"}, owner, json); r.Code != 400 ||
		!strings.Contains(string(r.Raw), "not offered") {
		t.Fatalf("a tool decision for a gate: %d %s", r.Code, r.Raw)
	}
	waitRun(t, g, runner, id, "waiting_approval")
	res := g.Do("POST", "/api/approvals/"+mine["id"].(string), map[string]any{"decision": "approve"}, owner, json).Want(t, 200).Body
	if res["outcome"] != "resumed" || res["kind"] != "sop" || res["acknowledged"] != true {
		t.Fatalf("approve = %v", res)
	}
	waitRun(t, g, runner, id, "completed")
	if r := g.Do("POST", "/api/approvals/"+mine["id"].(string), map[string]any{"decision": "approve"}, owner, json); r.Code != 404 {
		t.Fatalf("a spent gate: %d %s", r.Code, r.Raw)
	}

	id2 := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, runner, json).Want(t, 200).Body["run_id"].(string)
	waitRun(t, g, runner, id2, "waiting_approval")
	g.Do("POST", "/api/approvals/"+gate(owner, id2)["id"].(string), map[string]any{"decision": "deny", "reason": "not today"}, owner, json).Want(t, 200)
	run := waitRun(t, g, runner, id2, "cancelled")
	if !strings.Contains(fmt.Sprint(run["failure_reason"]), "not today") {
		t.Fatalf("cancelled run %v", run)
	}
}

// A device that may answer tool calls (sessions:execute) but has neither sops:read nor sops:approve gets the
// same 403 for a run parked at its gate as for one that never existed: the answer is no oracle of which run
// ids wait on a person.
func TestApprovalsSopGateNoOracle(t *testing.T) {
	t.Parallel()
	d, g, _ := startSopGatewayWith(t, "\n[permission_profiles.toolonly]\ngrants = [\"sessions:execute\"]\n", "")
	runner := rpctest.PairWithProfile(t, d, g, "runner")
	chatter := rpctest.PairWithProfile(t, d, g, "toolonly")
	json := "Content-Type: application/json"
	id := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, runner, json).Want(t, 200).Body["run_id"].(string)
	waitRun(t, g, runner, id, "waiting_approval")
	parked := "sop." + base64.RawURLEncoding.EncodeToString([]byte(id))
	ghost := "sop." + base64.RawURLEncoding.EncodeToString([]byte("no-such-run"))
	for _, a := range []string{parked, ghost} {
		r := g.Do("POST", "/api/approvals/"+a, map[string]any{"decision": "deny"}, chatter, json)
		if r.Code != 403 || !strings.Contains(string(r.Raw), "sops:approve") {
			t.Fatalf("answering %s without sops:approve: %d %s", a, r.Code, r.Raw)
		}
	}
	waitRun(t, g, runner, id, "waiting_approval")
}
