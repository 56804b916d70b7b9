package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// approvals/list and approvals/answer over the socket: this uid is user alice, capped at low risk, with a
// long approval timeout. Alice's waiting shell call is listed to her with reject as the only decision; her
// allow is refused as session/approve refuses it (-32012), a decision not offered and a forged id are -32602,
// and her reject is taken: the turn ends, the command never ran, and the list is empty.
func TestApprovalsListOverSocket(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "patient", fmt.Sprintf(`
[risk_profiles.patient]
level = "supervised"
workspace_only = true
approval_timeout_secs = 120

[permission_profiles.chat]
grants = %s
max_risk = "low"

[users.alice]
uid = %d
permission_profiles = ["chat"]
`, chatGrants, os.Getuid()))))
	c := dialRC(t, d, "")
	other := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	var listed api.ApprovalsListResult
	answered := false
	tr := c.prompt(s.SessionID, shellHook("touch never.txt"), hooks{onUpdate: func(u api.SessionUpdate) {
		if u.Type != api.UpdateApprovalRequest || answered {
			return
		}
		answered = true
		other.mustCall(api.MethodApprovalsList, struct{}{}, &listed)
		if len(listed.Approvals) != 1 || listed.Approvals[0].RequestID != u.RequestID || listed.SopGates != "not_permitted" ||
			len(listed.Approvals[0].Decisions) != 1 || listed.Approvals[0].Decisions[0] != api.DecisionReject {
			t.Errorf("approvals/list = %+v", listed)
			return
		}
		id := listed.Approvals[0].ID
		for _, c := range []struct {
			params api.ApprovalsAnswerParams
			code   int
		}{
			{api.ApprovalsAnswerParams{ID: id, Decision: api.DecisionAllowOnce}, api.CodeForbidden},
			{api.ApprovalsAnswerParams{ID: id, Decision: "approve"}, api.CodeInvalidParams},
			{api.ApprovalsAnswerParams{ID: "tool.x.y!", Decision: api.DecisionReject}, api.CodeInvalidParams},
			{api.ApprovalsAnswerParams{ID: "", Decision: api.DecisionReject}, api.CodeInvalidParams},
		} {
			if _, werr := other.call(api.MethodApprovalsAnswer, c.params); werr == nil || werr.Code != c.code {
				t.Errorf("approvals/answer %+v: %v, want %d", c.params, werr, c.code)
			}
		}
		var res api.ApprovalsAnswerResult
		other.mustCall(api.MethodApprovalsAnswer, api.ApprovalsAnswerParams{ID: id, Decision: api.DecisionReject}, &res)
		if !res.Acknowledged {
			t.Errorf("reject: %+v", res)
		}
	}})
	if tr.err != nil || !answered {
		t.Fatalf("prompt: %v (asked: %v)", tr.err, answered)
	}
	if exists(t, s.WorkspaceDir+"/never.txt") {
		t.Fatal("the rejected command ran")
	}
	var after api.ApprovalsListResult
	other.mustCall(api.MethodApprovalsList, struct{}{}, &after)
	if len(after.Approvals) != 0 {
		b, _ := json.Marshal(after)
		t.Fatalf("after the answer: %s", b)
	}
}
