package api

import "encoding/json"

// The cross-session approvals (ours, issue 27): everything waiting on a person, in one list. A tool call's
// approval lives in its session (session/approve answers it there); a SOP gate lives in the SOP engine
// (sops/approve and sops/deny). approvals/list gathers both for the caller, approvals/answer answers one by
// its id under the same rules as those methods. Scheduled jobs never wait on a person: a cron turn that would
// need an approval is refused when it runs.
const (
	MethodApprovalsList   = "approvals/list"
	MethodApprovalsAnswer = "approvals/answer"
)

// Approval kinds.
const (
	ApprovalKindTool = "tool"
	ApprovalKindSop  = "sop"
)

// SOP gate decisions of approvals/answer.
const (
	DecisionSopApprove = "approve"
	DecisionSopDeny    = "deny"
)

// PendingApproval is one thing waiting on a person. ID is what approvals/answer takes (opaque: it encodes the
// kind and the session and request, or the run). Decisions are the decisions the caller may send for it.
type PendingApproval struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Decisions []string `json:"decisions"`
	// A tool call's approval: the session, its agent, the request, the tool, its arguments as shown to the
	// person (escaped), the call's risk, "owner" when only the owner may allow it, when it was asked and when
	// it is denied unanswered (RFC 3339).
	SessionID   string `json:"session_id,omitempty"`
	AgentAlias  string `json:"agent_alias,omitempty"`
	RequestID   string `json:"request_id,omitempty"`
	ToolName    string `json:"tool_name,omitempty"`
	Summary     string `json:"arguments_summary,omitempty"`
	Risk        string `json:"risk,omitempty"`
	Approver    string `json:"approver,omitempty"`
	RequestedAt string `json:"requested_at,omitempty"`
	ExpiresAt   string `json:"expires_at,omitempty"`
	// Arguments are the call's arguments as the model sent them (a JSON object; absent when they were not
	// one): what a reject_with_edit's replacement starts from. Shown to a person only as text.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// A SOP gate: the run, its SOP, the step it waits at, since when, and approval or checkpoint.
	RunID        string  `json:"run_id,omitempty"`
	SopName      string  `json:"sop_name,omitempty"`
	Step         uint32  `json:"step,omitempty"`
	TotalSteps   uint32  `json:"total_steps,omitempty"`
	WaitingSince *string `json:"waiting_since,omitempty"`
	GateKind     string  `json:"gate_kind,omitempty"`
}

// ApprovalsListResult is approvals/list's answer: the tool approvals of every session the caller may see,
// oldest first, then the SOP gates when it holds sops:read and a SOP engine runs (SopGates says which: "listed",
// "not_permitted", "disabled").
type ApprovalsListResult struct {
	Approvals []PendingApproval `json:"approvals"`
	SopGates  string            `json:"sop_gates"`
}

// ApprovalsAnswerParams answer the pending approval ID with one of its decisions; Reason goes with a SOP deny,
// Replacement (the edited arguments, a JSON object) with a tool call's reject_with_edit.
type ApprovalsAnswerParams struct {
	ID          string          `json:"id"`
	Decision    string          `json:"decision"`
	Reason      *string         `json:"reason,omitempty"`
	Replacement json.RawMessage `json:"replacement,omitempty"`
}

// ApprovalsAnswerResult says the answer was taken; Outcome is the SOP engine's for a gate.
type ApprovalsAnswerResult struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Decision     string `json:"decision"`
	Acknowledged bool   `json:"acknowledged"`
	Outcome      string `json:"outcome,omitempty"`
}
