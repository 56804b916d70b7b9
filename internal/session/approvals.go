package session

import (
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// ToolDecisions are the decisions approvals/list offers for a tool call; CappedDecisions what it offers to a
// principal capped below the call's risk (it may only refuse; the owner may allow). reject_with_edit runs the
// call with the person's replacement arguments (approvals/answer's replacement, a JSON object; the listed
// arguments are what to start the edit from), checked by the policy again when it runs; it is offered only
// where allowing is, since it runs a call.
var (
	ToolDecisions   = []string{api.DecisionAllowOnce, api.DecisionAllowAlways, api.DecisionReject, api.DecisionRejectWithEdit}
	CappedDecisions = []string{api.DecisionReject}
)

// PendingApprovals lists the tool-call approvals waiting in every live session o may act on (the owner: all
// of them; another principal: its own sessions of agents it may use), oldest first. ID and Kind are left to
// the caller; Decisions are what o may answer.
func (m *Manager) PendingApprovals(o Owner) []api.PendingApproval {
	var out []api.PendingApproval
	var asked []time.Time
	for _, s := range m.snapshot() {
		if s.check(o) != nil {
			continue
		}
		s.mu.Lock()
		for id, p := range s.pending {
			dec := ToolDecisions
			if !o.Admin && auth.RiskAbove(p.risk, o.MaxApproveRisk) {
				dec = CappedDecisions
			}
			out = append(out, api.PendingApproval{Kind: api.ApprovalKindTool, Decisions: slices.Clone(dec),
				SessionID: s.id, AgentAlias: s.alias, RequestID: id, ToolName: visible.Escape(p.tool), Summary: p.summary,
				Risk: p.risk, Approver: p.approver, RequestedAt: p.asked.UTC().Format(time.RFC3339Nano),
				ExpiresAt: p.expires.UTC().Format(time.RFC3339Nano), Arguments: p.args})
			asked = append(asked, p.asked)
		}
		s.mu.Unlock()
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := asked[a].Compare(asked[b]); c != 0 {
			return c
		}
		return strings.Compare(out[a].SessionID+"\x00"+out[a].RequestID, out[b].SessionID+"\x00"+out[b].RequestID)
	})
	sorted := make([]api.PendingApproval, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}
