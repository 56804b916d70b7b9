package rpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// maxApprovalID bounds an approval id a client sends (a session id and a request id of at most 128 bytes
// each, base64url, fit well within it).
const maxApprovalID = 1024

// maxReplacement bounds a reject_with_edit's replacement arguments (the turn's own limit on a model's tool
// arguments applies when they run; this one only keeps a request from holding more).
const maxReplacement = 1 << 20

// registerApprovals serves approvals/list and approvals/answer over the session manager's pending approvals
// and the SOP engine's parked runs: it keeps no state of its own. Listing needs sessions:read (the tool calls)
// or sops:read (the SOP gates); answering a tool call follows session/approve (sessions:execute, the
// session's owner or the owner, the max_risk cap), a SOP gate sops/approve and sops/deny (sops:approve, the
// gate's approval_mode), which it calls.
func (s *Server) registerApprovals(m *session.Manager) {
	s.register(api.MethodApprovalsList, handle("", func(_ context.Context, p *Peer, _ *struct{}) (api.ApprovalsListResult, error) {
		pr := p.Principal()
		if pr == nil || !pr.Allows(api.GrantSessionsRead) && !pr.Allows(api.GrantSopsRead) {
			return api.ApprovalsListResult{}, forbidden(api.GrantSessionsRead)
		}
		out := api.ApprovalsListResult{Approvals: []api.PendingApproval{}}
		if pr.Allows(api.GrantSessionsRead) {
			for _, a := range m.PendingApprovals(p.owner()) {
				a.ID = toolApprovalID(a.SessionID, a.RequestID)
				out.Approvals = append(out.Approvals, a)
			}
		}
		switch e := s.opts.Sops; {
		case !pr.Allows(api.GrantSopsRead):
			out.SopGates = "not_permitted"
		case e == nil:
			out.SopGates = "disabled"
		default:
			out.SopGates = "listed"
			dec := []string{api.DecisionSopApprove, api.DecisionSopDeny}
			if !pr.Allows(api.GrantSopsApprove) {
				dec = []string{}
			}
			for _, r := range sopPending(e).Pending {
				out.Approvals = append(out.Approvals, api.PendingApproval{ID: sopApprovalID(r.RunID), Kind: api.ApprovalKindSop,
					Decisions: slices.Clone(dec), RunID: r.RunID, SopName: r.SopName, Step: r.Step, TotalSteps: r.TotalSteps,
					WaitingSince: r.WaitingSince, GateKind: r.Kind})
			}
		}
		return out, nil
	}))
	answer := handle("", func(ctx context.Context, p *Peer, params *api.ApprovalsAnswerParams) (api.ApprovalsAnswerResult, error) {
		if pr := p.Principal(); pr == nil || !pr.Allows(api.GrantSessionsExecute) && !pr.Allows(api.GrantSopsApprove) {
			return api.ApprovalsAnswerResult{}, forbidden(api.GrantSessionsExecute)
		}
		kind, parts, err := parseApprovalID(params.ID)
		if err != nil {
			return api.ApprovalsAnswerResult{}, err
		}
		res := api.ApprovalsAnswerResult{ID: params.ID, Kind: kind, Decision: params.Decision}
		if kind == api.ApprovalKindTool {
			if !p.Principal().Allows(api.GrantSessionsExecute) {
				return res, forbidden(api.GrantSessionsExecute)
			}
			if !slices.Contains(session.ToolDecisions, params.Decision) {
				return res, notOffered(params.Decision, session.ToolDecisions)
			}
			if params.Decision != api.DecisionRejectWithEdit && len(params.Replacement) > 0 {
				return res, router.InvalidParams("replacement goes only with decision reject_with_edit")
			}
			if len(params.Replacement) > maxReplacement {
				return res, router.InvalidParams("replacement is larger than 1 MiB")
			}
			r, err := m.Approve(p.owner(), api.SessionApproveParams{SessionID: parts[0], RequestID: parts[1], Decision: params.Decision,
				Replacement: params.Replacement})
			if err != nil {
				return res, err
			}
			if !r.Acknowledged {
				return res, noApproval(params.ID)
			}
			res.Acknowledged = true
			return res, nil
		}
		// The grant before the lookup: a 404 for a run not parked and a 403 for one that is would tell a
		// principal without sops:approve (nor sops:read) which run ids wait at a gate.
		if !p.Principal().Allows(api.GrantSopsApprove) {
			return res, forbidden(api.GrantSopsApprove)
		}
		method := map[string]string{api.DecisionSopApprove: api.MethodSopsApprove, api.DecisionSopDeny: api.MethodSopsDeny}[params.Decision]
		if method == "" {
			return res, notOffered(params.Decision, []string{api.DecisionSopApprove, api.DecisionSopDeny})
		}
		if e := s.opts.Sops; e == nil || !slices.ContainsFunc(sopPending(e).Pending, func(r api.SopPendingRun) bool { return r.RunID == parts[0] }) {
			return res, noApproval(params.ID)
		}
		body := map[string]any{"run_id": parts[0]}
		if params.Reason != nil && method == api.MethodSopsDeny {
			body["reason"] = *params.Reason
		}
		raw, _ := json.Marshal(body)
		// The SOP method itself, with its grant check (sops:approve) and the gate's rules.
		out, err := s.table.Dispatch(ctx, p, &jsonrpc.Request{ID: json.RawMessage(`1`), Method: method, Params: raw})
		if err != nil {
			return res, err
		}
		if r, ok := out.(api.SopResolveResult); ok {
			res.Outcome = r.Outcome
		}
		res.Acknowledged = true
		return res, nil
	})
	answer.Concurrent = true
	s.register(api.MethodApprovalsAnswer, answer)
}

var approvalB64 = base64.RawURLEncoding

func toolApprovalID(sessionID, requestID string) string {
	return api.ApprovalKindTool + "." + approvalB64.EncodeToString([]byte(sessionID)) + "." + approvalB64.EncodeToString([]byte(requestID))
}

func sopApprovalID(runID string) string {
	return api.ApprovalKindSop + "." + approvalB64.EncodeToString([]byte(runID))
}

// parseApprovalID is an id's kind and its parts (session and request, or run); a malformed id is -32602.
func parseApprovalID(id string) (string, []string, error) {
	bad := router.InvalidParams("id is not an approval id (approvals/list gives them)")
	if id == "" {
		return "", nil, router.InvalidParams("id is required")
	}
	if len(id) > maxApprovalID {
		return "", nil, bad
	}
	fields := strings.Split(id, ".")
	var want int
	switch fields[0] {
	case api.ApprovalKindTool:
		want = 3
	case api.ApprovalKindSop:
		want = 2
	default:
		return "", nil, bad
	}
	if len(fields) != want {
		return "", nil, bad
	}
	parts := make([]string, 0, want-1)
	for _, f := range fields[1:] {
		v, err := approvalB64.DecodeString(f)
		if err != nil || len(v) == 0 || len(v) > 128 {
			return "", nil, bad
		}
		parts = append(parts, string(v))
	}
	return fields[0], parts, nil
}

func notOffered(decision string, offered []string) error {
	return router.InvalidParams("decision '" + decision + "' is not offered for this approval: " + strings.Join(offered, ", "))
}

func noApproval(id string) error {
	return jsonrpc.NewError(api.CodeNotFound, "no pending approval "+id+": already answered, expired or never asked", nil)
}
