package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// capConfig is agent "a" under a supervised profile (a shell call asks, with a 1 s approval timeout) and this process's
// uid as user alice, who may run sessions and approve calls up to maxRisk.
func capConfig(maxRisk string) string {
	return agentConfig(echoTOML, "echo.default", "quick", fmt.Sprintf(`
[risk_profiles.quick]
level = "supervised"
workspace_only = true
approval_timeout_secs = 1

[permission_profiles.chat]
grants = %s
max_risk = %q

[users.alice]
uid = %d
permission_profiles = ["chat"]
`, chatGrants, maxRisk, os.Getuid()))
}

// approveOwn runs a shell call in alice's own session and answers its approval_request with decision as alice;
// it returns the approval_request event, the session/approve error (nil: acknowledged) and the tool's result.
func approveOwn(t *testing.T, c *rc, sid, decision string) (api.SessionUpdate, *wireError, api.SessionUpdate) {
	t.Helper()
	var req, res api.SessionUpdate
	var werr *wireError
	approveID := ""
	answered := false
	tr := c.prompt(sid, shellHook("touch ran.txt"), hooks{
		onUpdate: func(u api.SessionUpdate) {
			switch u.Type {
			case api.UpdateApprovalRequest:
				req = u
				approveID = c.send(api.MethodSessionApprove, api.SessionApproveParams{SessionID: sid, RequestID: u.RequestID, Decision: decision})
			case api.UpdateToolResult:
				res = u
			}
		},
		onOther: func(f frame) bool {
			if idOf(f) != approveID {
				return false
			}
			answered, werr = true, f.Error
			if werr == nil {
				var r api.SessionApproveResult
				if json.Unmarshal(f.Result, &r) != nil || !r.Acknowledged {
					t.Fatalf("session/approve answered %s", f.Raw)
				}
			}
			return true
		},
	})
	if tr.err != nil || !answered {
		t.Fatalf("prompt: %v (approve answered: %v)", tr.err, answered)
	}
	return req, werr, res
}

// Issue 20 item 9: a principal whose profile caps approvals at low cannot approve its own (medium-risk) shell
// call: the approval_request says the owner must answer, alice's session/approve is -32012 naming the cap, and
// with nobody else answering the request times out and the command never runs. Rejecting stays allowed.
func TestApprovalCapStopsSelfApproval(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(capConfig("low")))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	req, werr, res := approveOwn(t, c, s.SessionID, api.DecisionAllowOnce)
	if req.Approver != "owner" || req.Risk != "medium" {
		t.Fatalf("approval_request approver %q risk %q, want owner, medium", req.Approver, req.Risk)
	}
	if werr == nil || werr.Code != api.CodeForbidden || !strings.Contains(werr.Message, "only the owner may approve") {
		t.Fatalf("alice's session/approve = %v, want -32012 (only the owner)", werr)
	}
	var data map[string]any
	_ = json.Unmarshal(werr.Data, &data)
	if data["reason"] != "max_risk" || data["risk"] != "medium" || data["max_risk"] != "low" {
		t.Fatalf("error data %v", data)
	}
	if !res.IsError || !strings.Contains(toolOut(res), "approv") {
		t.Fatalf("tool_result %q, want the approval timeout", toolOut(res))
	}
	if _, err := os.Stat(filepath.Join(s.WorkspaceDir, "ran.txt")); err == nil {
		t.Fatal("the shell command ran although alice may not approve it")
	}
	// A rejection is always alice's to give.
	if _, werr, res := approveOwn(t, c, s.SessionID, api.DecisionRejectOnce); werr != nil || !res.IsError {
		t.Fatalf("reject: %v, tool_result %q", werr, toolOut(res))
	}
}

// A cap at the call's risk lets the principal approve it: the request is its own to answer.
func TestApprovalCapAtRiskAllows(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(capConfig("medium")))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	req, werr, res := approveOwn(t, c, s.SessionID, api.DecisionAllowOnce)
	if req.Approver != "" || werr != nil || res.IsError {
		t.Fatalf("approver %q, approve %v, tool_result %q", req.Approver, werr, toolOut(res))
	}
	if _, err := os.Stat(filepath.Join(s.WorkspaceDir, "ran.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}
}
