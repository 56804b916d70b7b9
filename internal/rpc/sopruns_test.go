package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/rpc"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// stepTurns is the step turn at the model's edge: every step answers "did step N" (the daemon's real turner
// runs an unattended agent turn; the e2e tests drive that).
type stepTurns struct{}

func (stepTurns) RunStep(_ context.Context, req engine.StepRequest) (engine.StepOutput, error) {
	return engine.StepOutput{Output: fmt.Sprintf("did step %d", req.Step), Agent: "default"}, nil
}

const (
	autoSOP  = `{"name":"auto","description":"d","version":"1","priority":"normal","execution_mode":"auto","triggers":[{"type":"manual"}],"steps":[{"number":1,"title":"one","body":"b","suggested_tools":[],"requires_confirmation":false,"kind":"execute"},{"number":2,"title":"two","body":"b","suggested_tools":[],"requires_confirmation":false,"kind":"execute"}]}`
	gatedSOP = `{"name":"gated","description":"d","version":"1","priority":"normal","execution_mode":"supervised","triggers":[{"type":"manual"}],"steps":[{"number":1,"title":"one","body":"b","suggested_tools":[],"requires_confirmation":false,"kind":"execute"},{"number":2,"title":"two","body":"b","suggested_tools":[],"requires_confirmation":false,"kind":"execute"}]}`
	cronSOP  = `{"name":"cronly","description":"d","version":"1","priority":"normal","execution_mode":"auto","triggers":[{"type":"cron","expression":"0 * * * *"}],"steps":[{"number":1,"title":"one","body":"b","suggested_tools":[],"requires_confirmation":false,"kind":"execute"}]}`
)

// serveSops serves the method table with a real engine over a SQLite run store (nil defs: no engine at all).
func serveSops(t *testing.T, cfg *config.Config, info rpc.PeerInfo, defs ...string) (func() *ndjson.Client, *engine.Engine) {
	t.Helper()
	return serveSopsWith(t, cfg, info, engine.Defaults(), defs...)
}

func serveSopsWith(t *testing.T, cfg *config.Config, info rpc.PeerInfo, set engine.Settings, defs ...string) (func() *ndjson.Client, *engine.Engine) {
	t.Helper()
	dir, err := os.MkdirTemp("", "zcsop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx, cancel := context.WithCancel(context.Background())
	var e *engine.Engine
	var st *runstore.SQLite
	if defs != nil {
		if st, err = runstore.OpenSQLite(ctx, filepath.Join(dir, "sop")); err != nil {
			t.Fatal(err)
		}
		e = engine.New(ctx, engine.Config{Store: st, Turns: stepTurns{}, Settings: set})
		if err := e.Restore(ctx); err != nil {
			t.Fatal(err)
		}
		var ds []sop.Sop
		for _, js := range defs {
			var d sop.Sop
			if err := json.Unmarshal([]byte(js), &d); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
		}
		e.Reload(ds)
	}
	t.Cleanup(func() {
		if e != nil {
			e.Close()
		}
		cancel()
		if st != nil {
			st.Close()
		}
	})
	return serveRPC(t, cfg, info, e), e
}

// serveRPC serves the method table over e to peers that all look like info (one server per identity; several
// may share an engine).
func serveRPC(t *testing.T, cfg *config.Config, info rpc.PeerInfo, e *engine.Engine) func() *ndjson.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "zcsrv")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := rpc.New(rpc.Options{Config: func() *config.Config { return cfg }, Info: rpc.Info{UID: os.Getuid()}, Sops: e})
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { _ = srv.ServeConn(ctx, nc, info, rpc.Limits{MaxFrameBytes: 8 << 20}) })
		}
	})
	t.Cleanup(func() { // registered after the engine's: runs first
		ln.Close()
		srv.CloseAll()
		cancel()
		wg.Wait()
		os.RemoveAll(dir)
	})
	return func() *ndjson.Client {
		c := ndjson.Dial(t, filepath.Join(dir, "s.sock"))
		c.Initialize()
		return c
	}
}

func result(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	return r
}

func wantSopErr(t *testing.T, what string, m map[string]any, code int, parts ...string) {
	t.Helper()
	got, msg := errorOf(t, m)
	if got != code {
		t.Fatalf("%s: code %d (%q), want %d", what, got, msg, code)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("%s: message %q does not say %q", what, msg, p)
		}
	}
}

// waitStatus polls sops/run-get until the run is in status (or the test's deadline).
func waitStatus(t *testing.T, c *ndjson.Client, runID, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for id := 1000; ; id++ {
		r := result(t, c.Call("sops/run-get", map[string]any{"run_id": runID}, id))
		if r["status"] == status {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %v, never %s: %v", runID, r["status"], status, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Without an engine every run method answers upstream's -32603 "SOP subsystem not enabled"; a bad payload
// is still -32602 first, as upstream checks it before the engine.
func TestSopRunsDisabled(t *testing.T) {
	dial, _ := serveSops(t, config.Default(), rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix})
	c := dial()
	wantSopErr(t, "bad payload", c.Call("sops/run", map[string]any{"name": "x", "payload": "{nope"}, 1), -32602, "payload is not valid JSON")
	for i, m := range []string{"sops/run", "sops/runs", "sops/run-overlay", "sops/run-get", "sops/cancel", "sops/pending", "sops/approve", "sops/deny", "sops/subscribe"} {
		wantSopErr(t, m, c.Call(m, map[string]any{"name": "x", "run_id": "r"}, 10+i), -32603, "SOP subsystem not enabled")
	}
	wantSopErr(t, "decide", c.Call("sops/decide", map[string]any{"name": "x", "run_id": "r", "decision": "approve"}, 30), -32603, "SOP subsystem not enabled")
}

// sops/run drives the run it starts to its end (upstream's #10513 left it `running` at step 1 forever), and
// sops/runs, run-get and run-overlay show it as upstream shapes them.
func TestSopRunIsDriven(t *testing.T) {
	dial, _ := serveSops(t, config.Default(), rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix}, autoSOP, cronSOP)
	c := dial()
	r := result(t, c.Call("sops/run", map[string]any{"name": "auto", "payload": `{"host":"db1"}`}, 1))
	id, _ := r["run_id"].(string)
	if !strings.HasPrefix(id, "run-") {
		t.Fatalf("run_id = %v", r)
	}
	run := waitStatus(t, c, id, "completed")
	steps, _ := run["step_results"].([]any)
	if len(steps) != 2 || run["completed_at"] == nil || run["trigger_event"].(map[string]any)["payload"] != `{"host":"db1"}` {
		t.Fatalf("completed run = %v", run)
	}
	runs := result(t, c.Call("sops/runs", map[string]any{"sop": nil}, 2))["runs"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["status"] != "completed" || runs[0].(map[string]any)["active"] != false {
		t.Fatalf("sops/runs = %v", runs)
	}
	ov := result(t, c.Call("sops/run-overlay", map[string]any{"name": "auto", "run_id": id}, 3))
	nodes := ov["nodes"].([]any)
	if len(nodes) != 2 || nodes[0].(map[string]any)["state"] != "completed" || ov["waiting"] != false {
		t.Fatalf("overlay = %v", ov)
	}
	wantSopErr(t, "no manual trigger", c.Call("sops/run", map[string]any{"name": "cronly"}, 4), -32602, "SOP 'cronly' has no matching manual trigger")
	wantSopErr(t, "unknown SOP", c.Call("sops/run", map[string]any{"name": "ghost"}, 5), -32602, "SOP 'ghost' has no matching manual trigger")
	wantSopErr(t, "missing name", c.Call("sops/run", map[string]any{}, 6), -32602, "name is required")
	wantSopErr(t, "unknown run", c.Call("sops/run-overlay", map[string]any{"name": "auto", "run_id": "run-nope"}, 7), -32602, "run 'run-nope' not found")
	wantSopErr(t, "overlay of another SOP", c.Call("sops/run-overlay", map[string]any{"name": "cronly", "run_id": id}, 8), -32602, "belongs to SOP 'auto', not 'cronly'")
	wantSopErr(t, "cancel a finished run", c.Call("sops/cancel", map[string]any{"run_id": id}, 9), -32602, "has already ended (completed)")
	// Upstream's resolve_gate: a finished run is already_resolved, answered with its overlay.
	if r := result(t, c.Call("sops/decide", map[string]any{"name": "auto", "run_id": id, "decision": "approve"}, 10)); r["outcome"] != "already_resolved" || r["status"] != "completed" {
		t.Fatalf("decide a finished run = %v", r)
	}
}

// A supervised run parks at step 1; sops/decide (zerocode's form, upstream's answers) resumes it to the end; a
// deny from sops/deny cancels another with its reason; bad decisions are refused naming the problem.
func TestSopDecideAndDeny(t *testing.T) {
	dial, _ := serveSops(t, config.Default(), rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix}, gatedSOP, autoSOP)
	c := dial()
	id := result(t, c.Call("sops/run", map[string]any{"name": "gated", "payload": nil}, 1))["run_id"].(string)
	waitStatus(t, c, id, "waiting_approval")
	ov := result(t, c.Call("sops/run-overlay", map[string]any{"name": "gated", "run_id": id}, 2))
	if ov["waiting"] != true || ov["nodes"].([]any)[0].(map[string]any)["state"] != "active" {
		t.Fatalf("parked overlay = %v", ov)
	}
	pend := result(t, c.Call("sops/pending", map[string]any{}, 3))["pending"].([]any)
	if len(pend) != 1 || pend[0].(map[string]any)["kind"] != "approval" || pend[0].(map[string]any)["waiting_since"] == nil {
		t.Fatalf("pending = %v", pend)
	}
	wantSopErr(t, "bad decision", c.Call("sops/decide", map[string]any{"name": "gated", "run_id": id, "decision": "yes"}, 4), -32602, "decision is not a valid approval decision")
	wantSopErr(t, "amend on an approval gate", c.Call("sops/decide", map[string]any{"name": "gated", "run_id": id, "decision": map[string]any{"amend": map[string]any{"text": "x"}}}, 5), -32602, "checkpoint")
	wantSopErr(t, "wrong SOP", c.Call("sops/decide", map[string]any{"name": "auto", "run_id": id, "decision": "approve"}, 6), -32602, "belongs to SOP 'gated', not 'auto'")
	wantSopErr(t, "SOP not loaded", c.Call("sops/decide", map[string]any{"name": "ghost", "run_id": id, "decision": "approve"}, 7), -32602, "SOP 'ghost'")
	if got := waitStatus(t, c, id, "waiting_approval"); len(got["step_results"].([]any)) != 0 {
		t.Fatalf("refused decisions recorded a step: %v", got)
	}
	res := result(t, c.Call("sops/decide", map[string]any{"name": "gated", "run_id": id, "decision": "approve"}, 8))
	if res["run_id"] != id || res["outcome"] != "resumed" {
		t.Fatalf("decide = %v", res)
	}
	waitStatus(t, c, id, "completed")

	id2 := result(t, c.Call("sops/run", map[string]any{"name": "gated"}, 9))["run_id"].(string)
	waitStatus(t, c, id2, "waiting_approval")
	den := result(t, c.Call("sops/deny", map[string]any{"run_id": id2, "reason": "not today"}, 10))
	if den["outcome"] != "denied" || den["run_id"] != id2 {
		t.Fatalf("deny = %v", den)
	}
	got := waitStatus(t, c, id2, "cancelled")
	if !strings.Contains(fmt.Sprint(got["failure_reason"]), "not today") {
		t.Fatalf("denied run = %v", got)
	}
	again := c.Call("sops/approve", map[string]any{"run_id": id2}, 11)
	if r, _ := again["result"].(map[string]any); r == nil || r["outcome"] != "already_resolved" {
		t.Fatalf("approve after deny = %v", again)
	}
	wantSopErr(t, "approve unknown", c.Call("sops/approve", map[string]any{"run_id": "run-ghost"}, 12), -32602, "run 'run-ghost' not found")
	wantSopErr(t, "approve no id", c.Call("sops/approve", map[string]any{}, 13), -32602, "run_id is required")
}

// A principal without sops:approve cannot clear a gate nor cancel, though it may read the runs.
func TestSopGrants(t *testing.T) {
	cfg := config.Default()
	other := os.Getuid() + 1
	cfg.Users = map[string]config.UserConfig{"viewer": {UID: other, PermissionProfiles: []string{"v"}}}
	cfg.PermissionProfiles = map[string]config.PermissionProfile{"v": {Grants: []string{"sops:read"}}}
	dial, _ := serveSops(t, cfg, rpc.PeerInfo{UID: other, Label: "unix:other", Transport: auth.TransportUnix}, gatedSOP)
	c := dial()
	if r := c.Call("sops/runs", map[string]any{}, 1); r["result"] == nil {
		t.Fatalf("viewer sops/runs = %v", r)
	}
	for i, m := range []string{"sops/run", "sops/decide", "sops/approve", "sops/deny", "sops/cancel"} {
		wantSopErr(t, m, c.Call(m, map[string]any{"name": "gated", "run_id": "r", "decision": "approve"}, 10+i), -32012, "sops:")
	}
}

// sops/subscribe answers the snapshot, then one notification per change of a run, in order, ending terminal.
func TestSopSubscribe(t *testing.T) {
	dial, _ := serveSops(t, config.Default(), rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix}, autoSOP)
	c := dial()
	sub := result(t, c.Call("sops/subscribe", map[string]any{}, 1))
	sid, _ := sub["subscription_id"].(string)
	if !strings.HasPrefix(sid, "sops-") || len(sub["runs"].([]any)) != 0 {
		t.Fatalf("subscribe = %v", sub)
	}
	// The run's first changes may reach the socket before the answer to sops/run: read frames in order.
	c.Request("sops/run", map[string]any{"name": "auto"}, 2)
	id := ""
	var statuses []string
	for id == "" || len(statuses) == 0 || statuses[len(statuses)-1] != "completed" {
		m := c.Next()
		if m["id"] != nil {
			id = result(t, m)["run_id"].(string)
			continue
		}
		if m["method"] != "sops/run_changed" {
			t.Fatalf("unexpected frame %v", m)
		}
		p := m["params"].(map[string]any)
		run := p["run"].(map[string]any)
		if p["subscription_id"] != sid || (id != "" && run["run_id"] != id) {
			t.Fatalf("notification %v", m)
		}
		statuses = append(statuses, run["status"].(string))
	}
	un := result(t, c.Call("sops/unsubscribe", map[string]any{"subscription_id": sid}, 3))
	if un["unsubscribed"] != true {
		t.Fatalf("unsubscribe = %v", un)
	}
	b, _ := json.Marshal(statuses)
	if !strings.HasPrefix(string(b), `["running"`) {
		t.Fatalf("statuses %s", b)
	}
}

// A thousand subscribers that never read (the feed a slow socket holds) keep at most SopFeedBuffer changes
// each, never block the runs, and each counts what it lost: memory is bounded by the buffer, not the traffic.
func TestSopFeedSlowSubscribersBounded(t *testing.T) {
	dial, e := serveSops(t, config.Default(), rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix}, autoSOP)
	c := dial()
	subs := make([]*engine.Subscription, 1000)
	for i := range subs {
		subs[i] = e.Subscribe(rpc.SopFeedBuffer)
	}
	var ids []string
	for i := range 40 {
		ids = append(ids, result(t, c.Call("sops/run", map[string]any{"name": "auto"}, 10+i))["run_id"].(string))
		waitStatus(t, c, ids[i], "completed") // max_concurrent 1: one run at a time
	}
	total := -1
	for i, s := range subs {
		held := len(s.C)
		lost := int(s.Lagged())
		if held > rpc.SopFeedBuffer || lost == 0 {
			t.Fatalf("subscriber %d holds %d (cap %d), lost %d", i, held, rpc.SopFeedBuffer, lost)
		}
		if total < 0 {
			total = held + lost
		} else if held+lost != total {
			t.Fatalf("subscriber %d saw %d changes, the first saw %d", i, held+lost, total)
		}
		s.Close()
	}
	if total < 40*2 {
		t.Fatalf("only %d changes published for 40 two-step runs", total)
	}
}

// Under approval_mode = "agent_tool" only an agent clears a gate: a person's sops/decide and sops/approve are
// -32010 (upstream's AUTH_REQUIRED for not_authorized), and the run stays parked.
func TestSopDecideRefusedByApprovalMode(t *testing.T) {
	set := engine.Defaults()
	set.ApprovalMode = "agent_tool"
	dial, _ := serveSopsWith(t, config.Default(), rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix}, set, gatedSOP)
	c := dial()
	id := result(t, c.Call("sops/run", map[string]any{"name": "gated"}, 1))["run_id"].(string)
	waitStatus(t, c, id, "waiting_approval")
	wantSopErr(t, "decide", c.Call("sops/decide", map[string]any{"name": "gated", "run_id": id, "decision": "approve"}, 2), -32010, "agent_tool")
	m := c.Call("sops/approve", map[string]any{"run_id": id}, 3)
	wantSopErr(t, "approve", m, -32010, "not_authorized")
	if data := m["error"].(map[string]any)["data"].(map[string]any); data["http_status"] != float64(403) || data["outcome"] != "not_authorized" {
		t.Fatalf("approve error data = %v", data)
	}
	waitStatus(t, c, id, "waiting_approval")
}

// A step whose approval policy names a group is cleared only by a member: the operator is refused (-32010,
// the gate untouched), alice (cli:alice, in the group) approves, and a step naming a policy that is not
// configured fails closed (-32603) for everyone.
func TestSopPolicyGroup(t *testing.T) {
	set := engine.Defaults()
	set.Groups = map[string][]string{"release": {"cli:alice"}}
	set.Policies = map[string]engine.Policy{"prod": {RequiredGroup: "release"}}
	policied := strings.Replace(strings.Replace(gatedSOP, `"name":"gated"`, `"name":"policied"`, 1),
		`"requires_confirmation":false,"kind":"execute"}`, `"requires_confirmation":false,"kind":"execute","policy":"prod"}`, 1)
	missing := strings.Replace(strings.Replace(gatedSOP, `"name":"gated"`, `"name":"unpoliced"`, 1),
		`"requires_confirmation":false,"kind":"execute"}`, `"requires_confirmation":false,"kind":"execute","policy":"nope"}`, 1)
	cfg := config.Default()
	alice := os.Getuid() + 1
	cfg.Users = map[string]config.UserConfig{"alice": {UID: alice, PermissionProfiles: []string{"approver"}}}
	cfg.PermissionProfiles = map[string]config.PermissionProfile{"approver": {Grants: []string{"sops:read", "sops:approve"}}}
	dialOp, e := serveSopsWith(t, cfg, rpc.PeerInfo{UID: os.Getuid(), Label: "unix:me", Transport: auth.TransportUnix}, set, policied, missing)
	dialAlice := serveRPC(t, cfg, rpc.PeerInfo{UID: alice, Label: "unix:alice", Transport: auth.TransportUnix}, e)
	op, al := dialOp(), dialAlice()

	id := result(t, op.Call("sops/run", map[string]any{"name": "policied"}, 1))["run_id"].(string)
	waitStatus(t, op, id, "waiting_approval")
	wantSopErr(t, "operator", op.Call("sops/decide", map[string]any{"name": "policied", "run_id": id, "decision": "approve"}, 2), -32010, "group 'release'")
	waitStatus(t, op, id, "waiting_approval")
	if r := result(t, al.Call("sops/decide", map[string]any{"name": "policied", "run_id": id, "decision": "approve"}, 3)); r["outcome"] != "resumed" {
		t.Fatalf("alice's decide = %v", r)
	}
	waitStatus(t, op, id, "completed")

	id2 := result(t, op.Call("sops/run", map[string]any{"name": "unpoliced"}, 4))["run_id"].(string)
	waitStatus(t, op, id2, "waiting_approval")
	for i, c := range []*ndjson.Client{op, al} {
		wantSopErr(t, "missing policy", c.Call("sops/decide", map[string]any{"name": "unpoliced", "run_id": id2, "decision": "approve"}, 5+i), -32603, "'nope'")
	}
	waitStatus(t, op, id2, "waiting_approval")
}
