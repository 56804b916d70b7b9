package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A principal capped at low risk cannot allow its own medium-risk call (nor run an edited one), but the owner
// answering the same pending request can: the request stays pending for it after the refusal.
func TestApprovalCapLeavesTheRequestToTheOwner(t *testing.T) {
	e := newEnv(t, nil)
	alice := Owner{Principal: "alice", ConnID: 7, Grants: []string{"sessions:execute"}, MaxApproveRisk: "low"}
	s := e.open(alice, api.SessionNewParams{})
	sk := &sink{}
	var refused, edited error
	var approver, risk string
	sk.onUpdate = func(ev api.SessionUpdate) {
		if ev.Type != api.UpdateApprovalRequest {
			return
		}
		approver, risk = ev.Approver, ev.Risk
		_, refused = e.m.Approve(alice, api.SessionApproveParams{SessionID: s.SessionID, RequestID: ev.RequestID, Decision: api.DecisionAllowAlways})
		_, edited = e.m.Approve(alice, api.SessionApproveParams{SessionID: s.SessionID, RequestID: ev.RequestID,
			Decision: api.DecisionRejectWithEdit, Replacement: []byte(`{"path":"b.txt","content":"x"}`)})
		if res, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: s.SessionID, RequestID: ev.RequestID, Decision: api.DecisionAllowOnce}); err != nil || !res.Acknowledged {
			t.Errorf("the owner's approval: %+v %v", res, err)
		}
	}
	res, err := e.m.Prompt(t.Context(), alice, api.SessionPromptParams{SessionID: s.SessionID, Prompt: `/tool file_write {"path":"a.txt","content":"by the owner"}`}, sk)
	if err != nil {
		t.Fatal(err)
	}
	sk.checkComplete(t, res)
	var ce *CapError
	if !errors.As(refused, &ce) || !errors.Is(refused, ErrApprovalCapped) || ce.Risk != "medium" || ce.MaxRisk != "low" {
		t.Fatalf("alice's allow_always = %v, want a CapError (medium over low)", refused)
	}
	if !errors.Is(edited, ErrApprovalCapped) {
		t.Fatalf("alice's reject_with_edit = %v, want ErrApprovalCapped", edited)
	}
	if approver != "owner" || risk != "medium" {
		t.Fatalf("approval_request approver %q risk %q", approver, risk)
	}
	if b, err := os.ReadFile(filepath.Join(e.workspace(), "a.txt")); err != nil || string(b) != "by the owner" {
		t.Fatalf("a.txt = %q %v, want the call the owner approved", b, err)
	}
	if _, err := os.Stat(filepath.Join(e.workspace(), "b.txt")); err == nil {
		t.Fatal("alice's edited call ran")
	}
}
