package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// sopGatewayConfig adds the SOP runtime and two device profiles: watcher reads SOP runs, runner also starts
// them; neither may approve.
const sopGatewayConfig = rpctest.GatewayConfig + `
[sop]
sops_dir = "shared/sops"

[permission_profiles.watcher]
grants = ["sops:read"]

[permission_profiles.runner]
grants = ["sops:read", "sops:execute"]

[permission_profiles.viewer]
grants = ["status:read"]

[permission_profiles.chatter]
grants = ["sessions:execute", "sessions:create", "sessions:read"]
`

// startSopGateway starts a daemon whose install holds the supervised SOP "deploy" (step 1 gated, manual
// trigger) and returns it with a gateway client and the owner's bearer header.
func startSopGateway(t *testing.T) (*rpctest.Daemon, *rpctest.Gateway, string) {
	t.Helper()
	return startSopGatewayWith(t, "", "")
}

// startSopGatewayWith is startSopGateway with more config, and a bullet added under the first step of
// deploy's SOP.md (e.g. "- policy: prod").
func startSopGatewayWith(t *testing.T, extraConfig, stepBullet string) (*rpctest.Daemon, *rpctest.Gateway, string) {
	t.Helper()
	cfgDir := filepath.Join(rpctest.ShortTempDir(t), "install")
	dir := filepath.Join(cfgDir, "shared", "sops", "deploy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if stepBullet != "" {
		stepBullet = "   " + stepBullet + "\n"
	}
	files := map[string]string{
		"SOP.toml": "[sop]\nname = \"deploy\"\ndescription = \"Ship a build\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n",
		"SOP.md":   "## Steps\n\n1. **Check** — Say the build is fine.\n" + stepBullet + "2. **Ship** — Say it shipped.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var banner rpctest.SyncBuf
	d := rpctest.StartOn(t, cfgDir, rpctest.WithBanner(&banner), rpctest.WithConfig(sopGatewayConfig+extraConfig))
	g := rpctest.NewGateway(t, d.GatewayURL(t))
	m := rpctest.BannerCode.FindStringSubmatch(banner.String())
	if m == nil {
		t.Fatalf("no pairing code in %q", banner.String())
	}
	return d, g, rpctest.PairOnce(t, g, m[1])
}

// waitRun polls GET /api/sops/runs until the run has status.
func waitRun(t *testing.T, g *rpctest.Gateway, auth, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs, _ := g.Do("GET", "/api/sops/runs", nil, auth).Want(t, 200).Body["runs"].([]any)
		for _, r := range runs {
			if m := r.(map[string]any); m["run_id"] == id && m["status"] == status {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never %s: %v", id, status, runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The run routes with upstream's statuses, and who may do what: a device that may read and start runs cannot
// approve one, on either surface; the owner approves from /admin/sop and from the authoring decide route.
func TestGatewaySopRuns(t *testing.T) {
	t.Parallel()
	d, g, owner := startSopGateway(t)
	runner := rpctest.PairWithProfile(t, d, g, "runner")
	watcher := rpctest.PairWithProfile(t, d, g, "watcher")
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	json := "Content-Type: application/json"

	g.Do("POST", "/api/sops/deploy/run", map[string]any{"payload": "{nope"}, runner, json).Want(t, 400)
	g.Do("POST", "/api/sops/ghost/run", map[string]any{}, runner, json).Want(t, 404)
	g.Do("POST", "/api/sops/deploy/run", map[string]any{}, watcher, json).Want(t, 403)
	g.Do("POST", "/api/sops/deploy/run", map[string]any{}, viewer, json).Want(t, 403)
	g.Do("GET", "/api/sops/runs", nil, viewer).Want(t, 403)
	id, _ := g.Do("POST", "/api/sops/deploy/run", map[string]any{"payload": `{"build":"1.2.3"}`}, runner, json).Want(t, 200).Body["run_id"].(string)
	if id == "" {
		t.Fatal("no run_id")
	}
	waitRun(t, g, watcher, id, "waiting_approval")

	ov := g.Do("GET", "/api/sops/deploy/runs/"+id+"/overlay", nil, watcher).Want(t, 200).Body
	if ov["waiting"] != true || len(ov["nodes"].([]any)) != 2 {
		t.Fatalf("overlay = %v", ov)
	}
	g.Do("GET", "/api/sops/deploy/runs/run-nope/overlay", nil, watcher).Want(t, 404)

	// Nobody but the owner clears the gate: not a runner, not through either route.
	g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `"approve"`, runner, json).Want(t, 403)
	g.Do("POST", "/admin/sop/approve", map[string]any{"run_id": id}, runner, json).Want(t, 403)
	g.Do("GET", "/admin/sop/pending", nil, runner).Want(t, 403)
	g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `"maybe"`, owner, json).Want(t, 400)
	g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `{"deny":`, owner, json).Want(t, 400)
	waitRun(t, g, watcher, id, "waiting_approval") // refused answers changed nothing

	pend := g.Do("GET", "/admin/sop/pending", nil, owner).Want(t, 200).Body["pending"].([]any)
	if len(pend) != 1 || pend[0].(map[string]any)["run_id"] != id || pend[0].(map[string]any)["kind"] != "approval" {
		t.Fatalf("pending = %v", pend)
	}
	res := g.Do("POST", "/admin/sop/approve", map[string]any{"run_id": id}, owner, json).Want(t, 200).Body
	if res["outcome"] != "resumed" || res["run_id"] != id {
		t.Fatalf("approve = %v", res)
	}
	waitRun(t, g, watcher, id, "completed")
	if res := g.Do("POST", "/admin/sop/approve", map[string]any{"run_id": id}, owner, json).Want(t, 200).Body; res["outcome"] != "already_resolved" {
		t.Fatalf("approve again = %v", res)
	}
	g.Do("POST", "/admin/sop/approve", map[string]any{"run_id": "run-ghost"}, owner, json).Want(t, 404)

	// A second run denied through the authoring route: 200 and the overlay, the run cancelled with the reason.
	id2, _ := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, owner, json).Want(t, 200).Body["run_id"].(string)
	waitRun(t, g, watcher, id2, "waiting_approval")
	ov = g.Do("POST", "/api/sops/deploy/runs/"+id2+"/decide", `{"deny":{"reason":"not today"}}`, owner, json).Want(t, 200).Body
	if ov["status"] != "cancelled" || !strings.Contains(ov["failure_reason"].(string), "not today") {
		t.Fatalf("deny overlay = %v", ov)
	}
	g.Do("POST", "/api/sops/deploy/runs/"+id2+"/decide", `"approve"`, owner, json).Want(t, 200) // already_resolved
}

// /ws/sops/runs: the snapshot, then the run frames of a run started meanwhile; the token never in the URL, a
// foreign Origin refused before the upgrade, and a device without sops:read refused.
func TestGatewaySopRunsWebSocket(t *testing.T) {
	t.Parallel()
	d, g, owner := startSopGateway(t)
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	base := d.GatewayURL(t)
	tok := strings.TrimPrefix(owner, "Authorization: Bearer ")

	if code := dialStatus(t, base, "/ws/sops/runs", nil); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code := dialStatus(t, base, "/ws/sops/runs?token="+tok, nil); code != 400 {
		t.Fatalf("token in the URL: %d", code)
	}
	hdr := rpctest.BearerHeader(owner)
	hdr.Set("Origin", "http://evil.example")
	if code := dialStatus(t, base, "/ws/sops/runs", hdr); code != 403 {
		t.Fatalf("foreign origin: %d", code)
	}
	if code := dialStatus(t, base, "/ws/sops/runs", rpctest.BearerHeader(viewer)); code != 403 {
		t.Fatalf("viewer: %d", code)
	}

	w := rpctest.DialWS(t, base, "/ws/sops/runs", &websocket.DialOptions{Subprotocols: []string{"bearer." + tok, "zeroclaw.v1"}})
	if w.Conn.Subprotocol() != "zeroclaw.v1" {
		t.Fatalf("subprotocol %q", w.Conn.Subprotocol())
	}
	snap := w.Next()
	if snap["type"] != "snapshot" || len(snap["runs"].([]any)) != 0 {
		t.Fatalf("snapshot = %v", snap)
	}
	id, _ := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, owner, "Content-Type: application/json").Want(t, 200).Body["run_id"].(string)
	for {
		f := w.Next()
		if f["type"] != "run" {
			t.Fatalf("frame %v", f)
		}
		run := f["run"].(map[string]any)
		if run["run_id"] != id {
			t.Fatalf("run frame for another run: %v", f)
		}
		if run["status"] == "waiting_approval" {
			break
		}
	}
	_ = w.Conn.Close(websocket.StatusNormalClosure, "")
}

// Upstream's SOP gate frame on /ws/chat ({"type":"approval_response","kind":"sop",...}): a malformed one is
// INVALID_APPROVAL_RESPONSE, a device that may chat but not approve is refused (the gate stays), the owner's
// approval answers sop_approval_result "resumed" and the run finishes; a second one says already_resolved.
func TestGatewaySopApprovalOverChat(t *testing.T) {
	t.Parallel()
	d, g, owner := startSopGateway(t)
	chatter := rpctest.PairWithProfile(t, d, g, "chatter")
	base := d.GatewayURL(t)
	id, _ := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, owner, "Content-Type: application/json").Want(t, 200).Body["run_id"].(string)
	waitRun(t, g, owner, id, "waiting_approval")

	cw := rpctest.DialWS(t, base, "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(chatter)})
	cw.Send(map[string]any{"type": "approval_response", "kind": "sop", "run_id": id, "decision": "approve"})
	if _, f := cw.Until("error"); f["code"] != "SOP_RESOLVE_FAILED" || !strings.Contains(f["message"].(string), "sops:approve") {
		t.Fatalf("chatter's approval = %v", f)
	}
	waitRun(t, g, owner, id, "waiting_approval")

	w := rpctest.DialWS(t, base, "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(owner)})
	w.Send(map[string]any{"type": "approval_response", "kind": "sop", "decision": "approve"})
	if _, f := w.Until("error"); f["code"] != "INVALID_APPROVAL_RESPONSE" {
		t.Fatalf("a SOP frame without run_id = %v", f)
	}
	w.Send(map[string]any{"type": "approval_response", "kind": "sop", "run_id": id, "decision": "approve"})
	if _, f := w.Until("sop_approval_result"); f["outcome"] != "resumed" || f["run_id"] != id {
		t.Fatalf("owner's approval = %v", f)
	}
	waitRun(t, g, owner, id, "completed")
	w.Send(map[string]any{"type": "approval_response", "kind": "sop", "run_id": id, "decision": "deny", "reason": "late"})
	if _, f := w.Until("sop_approval_result"); f["outcome"] != "already_resolved" {
		t.Fatalf("deny after the end = %v", f)
	}
}

// A step's approval policy over HTTP, with upstream's member form http:<sha256 of the bearer>: a device that
// may approve but is not in the group is 403 and the gate stays; with quorum 2 the owner's vote is 202
// "pending_quorum (1/2)" and the approver's second vote resumes the run.
func TestGatewaySopPolicyAndQuorum(t *testing.T) {
	t.Parallel()
	// The group is written once both tokens are known (a token is made at pairing): config.toml is rewritten
	// with the tokens the daemon stored, then reloaded.
	d, g, owner := startSopGatewayWith(t, "\n[permission_profiles.approver]\ngrants = [\"sops:read\", \"sops:approve\"]\n", "- policy: prod")
	approver := rpctest.PairWithProfile(t, d, g, "approver")
	hash := func(auth string) string {
		sum := sha256.Sum256([]byte(strings.TrimPrefix(auth, "Authorization: Bearer ")))
		return "http:" + hex.EncodeToString(sum[:])
	}
	js := "Content-Type: application/json"
	id, _ := g.Do("POST", "/api/sops/deploy/run", map[string]any{}, owner, js).Want(t, 200).Body["run_id"].(string)
	waitRun(t, g, owner, id, "waiting_approval")
	// No [sop.approval.policies.prod] yet: the policy is missing, which fails closed for everyone.
	g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `"approve"`, owner, js).Want(t, 500)
	if res := g.Do("POST", "/admin/sop/approve", map[string]any{"run_id": id}, owner, js).Want(t, 500).Body; res["outcome"] != "policy_missing" {
		t.Fatalf("approve without the policy = %v", res)
	}

	cfg := sopGatewayConfig + "\n[permission_profiles.approver]\ngrants = [\"sops:read\", \"sops:approve\"]\n" +
		"\n[sop.approval.groups.release]\nmembers = [\"" + hash(approver) + "\", \"" + hash(owner) + "\"]\n" +
		"\n[sop.approval.policies.prod]\nrequired_group = \"release\"\nquorum = 2\n"
	c := d.Dial(t)
	c.Initialize()
	raw, err := os.ReadFile(filepath.Join(d.ConfigDir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// Keep the paired tokens the daemon wrote, add the approval tables.
	tokens := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "paired_tokens") {
			tokens = line
		}
	}
	if tokens == "" {
		t.Fatalf("no paired_tokens in %s", raw)
	}
	cfg = strings.Replace(cfg, "[agents.default]", "[gateway]\n"+tokens+"\n\n[agents.default]", 1)
	if err := os.WriteFile(filepath.Join(d.ConfigDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Request("config/reload", map[string]any{}, "rl")
	c.Result("rl")
	outsider := rpctest.PairWithProfile(t, d, g, "approver") // paired after: not in the group
	waitPolicy := time.Now().Add(10 * time.Second)
	for {
		r := g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `"approve"`, outsider, js)
		if r.Code == 403 {
			break
		}
		if r.Code != 500 || time.Now().After(waitPolicy) {
			t.Fatalf("outsider's decide = %d %s", r.Code, r.Raw)
		}
		time.Sleep(50 * time.Millisecond) // the reload reaches the engine
	}
	waitRun(t, g, owner, id, "waiting_approval")
	ov := g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `"approve"`, owner, js).Want(t, 202).Body
	if ov["outcome"] != "pending_quorum (1/2)" || ov["waiting"] != true {
		t.Fatalf("first vote = %v", ov)
	}
	res := g.Do("POST", "/admin/sop/approve", map[string]any{"run_id": id}, owner, js).Want(t, 202).Body
	if res["outcome"] != "pending_quorum (1/2)" {
		t.Fatalf("the same voter again = %v", res)
	}
	ov = g.Do("POST", "/api/sops/deploy/runs/"+id+"/decide", `"approve"`, approver, js).Want(t, 200).Body
	if ov["outcome"] != "resumed" {
		t.Fatalf("second vote = %v", ov)
	}
	waitRun(t, g, owner, id, "completed")
}
