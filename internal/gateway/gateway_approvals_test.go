package gateway_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// approvalsConfig: two chatting device profiles, one of them capped at low risk (it may only refuse a shell
// call), with a long approval timeout so that a request waits while the test looks at it.
const approvalsConfig = rpctest.GatewayProfilesConfig + `
[agents.slow]
model_provider = "echo.default"
risk_profile = "patient"

[risk_profiles.patient]
level = "supervised"
approval_timeout_secs = 120

[permission_profiles.capped]
grants = ["sessions:execute", "sessions:create", "sessions:read"]
max_risk = "low"
`

// listApprovals is GET /api/approvals for auth: the approvals and sop_gates.
func listApprovals(t *testing.T, g *rpctest.Gateway, auth string) ([]map[string]any, string) {
	t.Helper()
	r := g.Do("GET", "/api/approvals", nil, auth).Want(t, 200)
	var out []map[string]any
	for _, a := range r.Body["approvals"].([]any) {
		out = append(out, a.(map[string]any))
	}
	gates, _ := r.Body["sop_gates"].(string)
	return out, gates
}

// askShell opens a /ws/chat session of agent slow as auth and makes its turn wait on a shell approval.
func askShell(t *testing.T, base, auth, file string) (*rpctest.WS, string, string) {
	t.Helper()
	w := rpctest.DialWS(t, base, "/ws/chat?agent=slow", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	sid := w.Next()["session_id"].(string)
	w.Send(map[string]any{"type": "message", "content": `/tool shell {"command": "touch ` + file + `"}`})
	_, req := w.Until("approval_request")
	return w, sid, req["request_id"].(string)
}

// The cross-session approvals (issue 27): a device lists only the approvals of its own sessions, the owner
// every one; another device cannot answer a device's approval even with its id (403, still pending), a forged
// or unknown id is 400 or 404, a decision not offered is 400 and leaves it pending, a device capped below the
// call's risk is offered only reject and is refused an allow; the owner's allow runs the command in the
// device's turn, and the id is spent after.
func TestApprovalsAcrossSessions(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, approvalsConfig)
	owner := rpctest.PairOnce(t, g, code)
	alice := rpctest.PairWithProfile(t, d, g, "chatter")
	bob := rpctest.PairWithProfile(t, d, g, "chatter")
	capped := rpctest.PairWithProfile(t, d, g, "capped")
	base := d.GatewayURL(t)
	ws := filepath.Join(d.ConfigDir, "agents", "slow", "workspace")

	if got, _ := listApprovals(t, g, alice); len(got) != 0 {
		t.Fatalf("nothing asked yet, alice sees %v", got)
	}
	w, sid, rid := askShell(t, base, alice, "by-owner.txt")

	mine, gates := listApprovals(t, g, alice)
	if len(mine) != 1 || mine[0]["session_id"] != sid || mine[0]["request_id"] != rid || mine[0]["kind"] != "tool" ||
		mine[0]["tool_name"] != "shell" || !strings.Contains(mine[0]["arguments_summary"].(string), "by-owner.txt") ||
		mine[0]["risk"] != "medium" || mine[0]["expires_at"] == "" || mine[0]["agent_alias"] != "slow" {
		t.Fatalf("alice's approvals %v", mine)
	}
	if dec := mine[0]["decisions"].([]any); len(dec) != 4 || dec[0] != "allow_once" || dec[2] != "reject" || dec[3] != "reject_with_edit" {
		t.Fatalf("decisions offered %v", dec)
	}
	if gates != "not_permitted" { // the chatter profile has no sops:read
		t.Fatalf("sop_gates %q for a device without sops:read", gates)
	}
	id := mine[0]["id"].(string)
	if got, _ := listApprovals(t, g, bob); len(got) != 0 {
		t.Fatalf("bob sees alice's approval: %v", got)
	}
	all, ownerGates := listApprovals(t, g, owner)
	if len(all) != 1 || all[0]["id"] != id || ownerGates != "disabled" {
		t.Fatalf("the owner's approvals %v (sop_gates %q)", all, ownerGates)
	}

	// Bob has alice's id: refused, and it stays pending.
	r := g.Do("POST", "/api/approvals/"+id, map[string]any{"decision": "allow_once"}, bob, "Content-Type: application/json")
	if r.Code != 403 {
		t.Fatalf("bob answering alice's approval: %d %s", r.Code, r.Raw)
	}
	// Forged ids: not ours at all (400), well formed but naming nothing (404), a real session with another
	// request id (404).
	enc := base64.RawURLEncoding.EncodeToString
	for forged, want := range map[string]int{
		"nope": 400, "tool.***.x": 400, "tool." + enc([]byte(sid)): 400, "sop": 400,
		"tool." + enc([]byte("no-such-session")) + "." + enc([]byte(rid)): 404,
		"tool." + enc([]byte(sid)) + "." + enc([]byte("forged-request")):  404,
		"tool." + strings.Repeat("A", 2000) + "." + enc([]byte(rid)):      400,
	} {
		r := g.Do("POST", "/api/approvals/"+forged, map[string]any{"decision": "allow_once"}, owner, "Content-Type: application/json")
		if r.Code != want {
			t.Errorf("forged id %.60q: %d, want %d (%s)", forged, r.Code, want, r.Raw)
		}
	}
	// A decision not offered ("approve" is a SOP's).
	for _, dec := range []string{"approve", "", "ALLOW_ONCE"} {
		r := g.Do("POST", "/api/approvals/"+id, map[string]any{"decision": dec}, owner, "Content-Type: application/json")
		if r.Code != 400 || !strings.Contains(string(r.Raw), "not offered") {
			t.Fatalf("decision %q: %d %s", dec, r.Code, r.Raw)
		}
	}
	if still, _ := listApprovals(t, g, alice); len(still) != 1 || still[0]["id"] != id {
		t.Fatalf("after the refused answers alice's approval is %v", still)
	}
	if _, err := os.Stat(filepath.Join(ws, "by-owner.txt")); !os.IsNotExist(err) {
		t.Fatalf("the command ran before anyone allowed it (%v)", err)
	}

	// The owner allows it from the list: alice's turn runs the command and finishes.
	r = g.Do("POST", "/api/approvals/"+id, map[string]any{"decision": "allow_once"}, owner, "Content-Type: application/json").Want(t, 200)
	if r.Body["acknowledged"] != true || r.Body["kind"] != "tool" {
		t.Fatalf("answer %s", r.Raw)
	}
	if seen, _ := w.Until("done"); !slices.Contains(seen, "tool_result") {
		t.Fatalf("alice's turn after the owner's answer: %v", seen)
	}
	if _, err := os.Stat(filepath.Join(ws, "by-owner.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	if r := g.Do("POST", "/api/approvals/"+id, map[string]any{"decision": "reject"}, owner, "Content-Type: application/json"); r.Code != 404 {
		t.Fatalf("a spent id: %d %s", r.Code, r.Raw)
	}
	if got, _ := listApprovals(t, g, owner); len(got) != 0 {
		t.Fatalf("answered, still listed: %v", got)
	}

	// A device capped below the call's risk is offered reject only, and its allow is refused as session/approve
	// refuses it; its reject is taken.
	cw, _, _ := askShell(t, base, capped, "by-capped.txt")
	mine, _ = listApprovals(t, g, capped)
	if len(mine) != 1 || mine[0]["approver"] != "owner" || len(mine[0]["decisions"].([]any)) != 1 || mine[0]["decisions"].([]any)[0] != "reject" {
		t.Fatalf("the capped device's approvals %v", mine)
	}
	cid := mine[0]["id"].(string)
	if r := g.Do("POST", "/api/approvals/"+cid, map[string]any{"decision": "allow_once"}, capped, "Content-Type: application/json"); r.Code != 403 ||
		!strings.Contains(string(r.Raw), "only the owner may approve") {
		t.Fatalf("the capped device allowing: %d %s", r.Code, r.Raw)
	}
	g.Do("POST", "/api/approvals/"+cid, map[string]any{"decision": "reject"}, capped, "Content-Type: application/json").Want(t, 200)
	cw.Until("done")
	if _, err := os.Stat(filepath.Join(ws, "by-capped.txt")); !os.IsNotExist(err) {
		t.Fatalf("the rejected command ran (%v)", err)
	}
}

// Reject with edit (upstream's reject_with_edit) from the cross-session list and from /ws/chat: the list
// carries the call's arguments to start the edit from; the answer runs the edited call in the asking turn and
// never the original; a replacement that is not a JSON object, one with another decision, or one larger than
// 1 MiB is 400 and leaves the call pending; a device capped below the call's risk is not offered it and is
// refused it (403); on /ws/chat decision "edit" with replacement runs the edit, and "edit" without one is an
// INVALID_APPROVAL_RESPONSE frame that leaves the call waiting.
func TestApprovalsRejectWithEdit(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, approvalsConfig)
	owner := rpctest.PairOnce(t, g, code)
	alice := rpctest.PairWithProfile(t, d, g, "chatter")
	capped := rpctest.PairWithProfile(t, d, g, "capped")
	base := d.GatewayURL(t)
	ws := filepath.Join(d.ConfigDir, "agents", "slow", "workspace")
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(ws, name)); return err == nil }

	w, _, _ := askShell(t, base, alice, "original.txt")
	mine, _ := listApprovals(t, g, alice)
	if len(mine) != 1 {
		t.Fatalf("alice's approvals %v", mine)
	}
	args, _ := mine[0]["arguments"].(map[string]any)
	if args["command"] != "touch original.txt" {
		t.Fatalf("the listed arguments %v are not the call's", mine[0]["arguments"])
	}
	id := mine[0]["id"].(string)
	hdr := "Content-Type: application/json"
	for name, body := range map[string]map[string]any{
		"no replacement":  {"decision": "reject_with_edit"},
		"a string":        {"decision": "reject_with_edit", "replacement": "touch x"},
		"an array":        {"decision": "reject_with_edit", "replacement": []any{"touch x"}},
		"null":            {"decision": "reject_with_edit", "replacement": nil},
		"with allow_once": {"decision": "allow_once", "replacement": map[string]any{"command": "touch x"}},
	} {
		r := g.Do("POST", "/api/approvals/"+id, body, owner, hdr)
		if r.Code != 400 || !strings.Contains(string(r.Raw), "replacement") {
			t.Errorf("%s: %d %.200s", name, r.Code, r.Raw)
		}
	}
	// A replacement past the gateway's body bound is refused before it is read.
	if r := g.Do("POST", "/api/approvals/"+id, map[string]any{"decision": "reject_with_edit",
		"replacement": map[string]any{"command": "touch x", "pad": strings.Repeat("a", 70<<10)}}, owner, hdr); r.Code != 413 {
		t.Errorf("a 70 KiB replacement: %d %.200s", r.Code, r.Raw)
	}
	if still, _ := listApprovals(t, g, alice); len(still) != 1 || still[0]["id"] != id {
		t.Fatalf("after the refused edits the approval is %v", still)
	}
	r := g.Do("POST", "/api/approvals/"+id, map[string]any{"decision": "reject_with_edit", "replacement": map[string]any{"command": "touch edited.txt"}}, owner, hdr).Want(t, 200)
	if r.Body["acknowledged"] != true || r.Body["decision"] != "reject_with_edit" {
		t.Fatalf("answer %s", r.Raw)
	}
	_, res := w.Until("tool_result")
	if out, _ := res["output"].(string); !strings.Contains(out, "edited the arguments") || !strings.Contains(out, "edited.txt") {
		t.Fatalf("the tool result %q does not tell the model the call was edited", out)
	}
	w.Until("done")
	if !exists("edited.txt") || exists("original.txt") {
		t.Fatalf("after the edit: edited.txt %v, original.txt %v (want the edited call only)", exists("edited.txt"), exists("original.txt"))
	}

	// The capped device: not offered, and refused.
	cw, _, _ := askShell(t, base, capped, "capped.txt")
	mine, _ = listApprovals(t, g, capped)
	if len(mine) != 1 || slices.Contains(mine[0]["decisions"].([]any), any("reject_with_edit")) {
		t.Fatalf("the capped device is offered %v", mine)
	}
	if r := g.Do("POST", "/api/approvals/"+mine[0]["id"].(string), map[string]any{"decision": "reject_with_edit",
		"replacement": map[string]any{"command": "touch capped-edit.txt"}}, capped, hdr); r.Code != 403 {
		t.Fatalf("the capped device's edit: %d %s", r.Code, r.Raw)
	}
	g.Do("POST", "/api/approvals/"+mine[0]["id"].(string), map[string]any{"decision": "reject"}, capped, hdr).Want(t, 200)
	cw.Until("done")
	if exists("capped-edit.txt") || exists("capped.txt") {
		t.Fatal("a capped device's call ran")
	}

	// /ws/chat: "edit" without a replacement is refused and the call still waits; with one, the edit runs.
	w2, _, rid := askShell(t, base, alice, "chat-original.txt")
	w2.Send(map[string]any{"type": "approval_response", "request_id": rid, "decision": "edit"})
	if _, f := w2.Until("error"); f["code"] != "INVALID_APPROVAL_RESPONSE" {
		t.Fatalf("edit without replacement: %v", f)
	}
	if still, _ := listApprovals(t, g, alice); len(still) != 1 {
		t.Fatalf("the refused edit answered the call: %v", still)
	}
	w2.Send(map[string]any{"type": "approval_response", "request_id": rid, "decision": "edit", "replacement": map[string]any{"command": "touch chat-edited.txt"}})
	w2.Until("done")
	if !exists("chat-edited.txt") || exists("chat-original.txt") {
		t.Fatalf("after the chat's edit: chat-edited.txt %v, chat-original.txt %v", exists("chat-edited.txt"), exists("chat-original.txt"))
	}
}
