package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Approver decides medium-risk tool calls that the policy says to ask about. The session layer implements it.
type Approver interface {
	// RequestApproval registers req, calls req.Announce exactly once (so the approval_request event reaches the
	// client only once an answer can be accepted), and blocks until a decision arrives, ctx is cancelled, or
	// req.Timeout passes. It may return a decision without announcing when it already knows the answer (a tool
	// allowed with allow_always earlier in the session), unless req.AskEveryTime is set. Errors wrap
	// ErrApprovalTimeout, ErrApprovalAbandoned or ctx's error.
	RequestApproval(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error)
}

// ApprovalRequest is one question put to the user about a tool call. Summary is already escaped for display
// (tools.Policy.Summary); ToolName is the tool's real name, escaped only in the event.
type ApprovalRequest struct {
	RequestID, ToolName, Summary string
	Arguments                    json.RawMessage
	Timeout                      time.Duration
	// AskEveryTime asks even when the tool was allowed for the session with allow_always (tools.Decision).
	AskEveryTime bool
	// Risk is the call's risk class (tools.Risk*): a principal whose permission profile caps approvals below it
	// cannot approve the call (the owner can).
	Risk string
	// Announce emits the approval_request event. The approver calls it once, after registering the request;
	// approver is "" when the client that started the turn may answer, ApproverOwner when only the owner may.
	Announce func(approver string)
}

// ApproverOwner marks an approval_request only the owner may approve: the principal whose turn asks is capped
// below the call's risk (permission_profiles.<name>.max_risk).
const ApproverOwner = "owner"

// ApprovalDecision is the user's answer: Decision is one of the api.Decision* values; Replacement holds the
// edited arguments of reject_with_edit.
type ApprovalDecision struct {
	Decision    string
	Replacement json.RawMessage
}

// Approval outcomes other than a decision; the model is told which one happened.
var (
	// ErrApprovalTimeout reports that nobody answered within the request's timeout.
	ErrApprovalTimeout = errors.New("agent: approval timed out")
	// ErrApprovalAbandoned reports that the client that could answer went away (disconnect, shutdown).
	ErrApprovalAbandoned = errors.New("agent: approval abandoned")
)
