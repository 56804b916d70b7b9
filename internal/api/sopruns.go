package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// SOP run methods (upstream/sop.md §3; the authoring methods sops/list|get|... are in the definitions' file).
// sops/run, sops/runs, sops/run-overlay and sops/decide are upstream's; the others are ours, for what upstream
// does only through its gateway (/admin/sop/*) or not at all (cancel, one run's full record, a live feed).
const (
	MethodSopsRun        = "sops/run"
	MethodSopsRuns       = "sops/runs"
	MethodSopsRunOverlay = "sops/run-overlay"
	MethodSopsDecide     = "sops/decide"

	// MethodSopsRunGet returns one run's full record, step results included (ours).
	MethodSopsRunGet = "sops/run-get"
	// MethodSopsCancel cancels an active run (ours: upstream's engine has cancel_run but no surface calls it).
	MethodSopsCancel = "sops/cancel"
	// MethodSopsPending lists the runs parked on a person (upstream's GET /admin/sop/pending).
	MethodSopsPending = "sops/pending"
	// MethodSopsApprove and MethodSopsDeny resolve a gate by run id alone (upstream's POST /admin/sop/approve
	// and /deny), answering {outcome, run_id}.
	MethodSopsApprove = "sops/approve"
	MethodSopsDeny    = "sops/deny"
	// MethodSopsSubscribe starts a live runs feed on this connection: the result is the snapshot, then every
	// change of a run arrives as NotifySopsRun (ours; upstream's TUI polls sops/runs every 2 s).
	MethodSopsSubscribe   = "sops/subscribe"
	MethodSopsUnsubscribe = "sops/unsubscribe"
	// NotifySopsRun carries one changed run: {subscription_id, run: SopRunSummary}.
	NotifySopsRun = "sops/run_changed"
	// NotifySopsLagged tells a subscriber it missed changes: {subscription_id, missed}. Re-read sops/runs.
	NotifySopsLagged = "sops/lagged"
)

// Run statuses (upstream's SopRunStatus, snake_case).
const (
	SopRunPending          = "pending"
	SopRunRunning          = "running"
	SopRunWaitingApproval  = "waiting_approval"
	SopRunPausedCheckpoint = "paused_checkpoint"
	SopRunCompleted        = "completed"
	SopRunFailed           = "failed"
	SopRunCancelled        = "cancelled"
)

// SopRunTerminal reports whether a run status is final.
func SopRunTerminal(status string) bool {
	return status == SopRunCompleted || status == SopRunFailed || status == SopRunCancelled
}

// Step result statuses (upstream's SopStepStatus).
const (
	SopStepCompleted = "completed"
	SopStepFailed    = "failed"
	SopStepSkipped   = "skipped"
)

// Overlay node states (upstream's NodeRunState).
const (
	SopNodePending   = "pending"
	SopNodeActive    = "active"
	SopNodeCompleted = "completed"
	SopNodeFailed    = "failed"
	SopNodeSkipped   = "skipped"
)

// SopEvent is what triggered a run (upstream's SopEvent): source is the trigger type (manual, mqtt, cron,
// webhook, filesystem, ...); topic and payload are null when absent.
type SopEvent struct {
	Source    string  `json:"source"`
	Topic     *string `json:"topic"`
	Payload   *string `json:"payload"`
	Timestamp string  `json:"timestamp"`
}

// SopStepToolCall is one tool invocation made while a step ran (upstream's StepToolCall).
type SopStepToolCall struct {
	Index      uint32          `json:"index"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Success    bool            `json:"success"`
	Output     string          `json:"output"`
	OutputData json.RawMessage `json:"output_data,omitempty"`
	Error      string          `json:"error,omitempty"`
	DurationMS uint64          `json:"duration_ms"`
}

// SopStepResult is one executed step (upstream's SopStepResult). CompletedAt is null while the step runs.
type SopStepResult struct {
	StepNumber     uint32            `json:"step_number"`
	Status         string            `json:"status"`
	Output         string            `json:"output"`
	StartedAt      string            `json:"started_at"`
	CompletedAt    *string           `json:"completed_at"`
	EffectiveAgent string            `json:"effective_agent,omitempty"`
	ToolCalls      []SopStepToolCall `json:"tool_calls,omitempty"`
	// Attempt is ours: the 1-based try of this step in this run, so a retried or interrupted step shows.
	Attempt int `json:"attempt,omitempty"`
}

// SopRun is a run's full record (upstream's SopRun), plus ours after RevisionBase: FailureReason, why a failed
// or cancelled run ended (upstream drops it, its #9783), and Gate, the gate a parked run shows.
type SopRun struct {
	RunID         string          `json:"run_id"`
	SopName       string          `json:"sop_name"`
	TriggerEvent  SopEvent        `json:"trigger_event"`
	FrameMarkerID string          `json:"frame_marker_id"`
	Status        string          `json:"status"`
	CurrentStep   uint32          `json:"current_step"`
	TotalSteps    uint32          `json:"total_steps"`
	StartedAt     string          `json:"started_at"`
	CompletedAt   *string         `json:"completed_at"`
	StepResults   []SopStepResult `json:"step_results"`
	WaitingSince  *string         `json:"waiting_since"`
	LLMCallsSaved uint64          `json:"llm_calls_saved"`
	Revision      uint32          `json:"revision"`
	RevisionBase  uint32          `json:"revision_base"`
	FailureReason string          `json:"failure_reason,omitempty"`
	Gate          *SopGate        `json:"gate,omitempty"`
	// SopRevision is the definition's revision the run keeps (a reload never changes a running run);
	// StartedBy who started it ("cli:operator", "http:<subject>", "agent:<alias>", "system" for a trigger);
	// InFlight the step begun and not yet recorded (after a crash: marked interrupted); PendingReason why a
	// pending run waits.
	SopRevision   string           `json:"sop_revision,omitempty"`
	StartedBy     string           `json:"started_by,omitempty"`
	InFlight      *SopStepInFlight `json:"in_flight,omitempty"`
	PendingReason string           `json:"pending_reason,omitempty"`
}

// SopStepInFlight is a step a driver has durably started and not yet recorded.
type SopStepInFlight struct {
	Step      uint32 `json:"step"`
	Attempt   int    `json:"attempt"`
	StartedAt string `json:"started_at"`
}

// SopGate is the gate a parked run waits at: an answer is bound to this step and revision. Kind is approval or
// checkpoint; Policy the step's [sop.approval.policies] entry; Votes the approvals counted toward a quorum.
type SopGate struct {
	Step     uint32   `json:"step"`
	Kind     string   `json:"kind"`
	Revision uint32   `json:"revision"`
	Policy   string   `json:"policy,omitempty"`
	Votes    []string `json:"votes,omitempty"`
}

// SopRunSummary is a run as list surfaces show it (upstream's SopRunSummary). Active is true while the run is
// live rather than a retained terminal record. FailureReason is ours, as in SopRun.
type SopRunSummary struct {
	RunID         string  `json:"run_id"`
	SopName       string  `json:"sop_name"`
	Status        string  `json:"status"`
	CurrentStep   uint32  `json:"current_step"`
	TotalSteps    uint32  `json:"total_steps"`
	StartedAt     string  `json:"started_at"`
	CompletedAt   *string `json:"completed_at"`
	TriggerSource string  `json:"trigger_source"`
	Active        bool    `json:"active"`
	FailureReason string  `json:"failure_reason,omitempty"`
}

// Summary projects a run onto its list row.
func (r SopRun) Summary(active bool) SopRunSummary {
	return SopRunSummary{RunID: r.RunID, SopName: r.SopName, Status: r.Status, CurrentStep: r.CurrentStep,
		TotalSteps: r.TotalSteps, StartedAt: r.StartedAt, CompletedAt: r.CompletedAt,
		TriggerSource: r.TriggerEvent.Source, Active: active, FailureReason: r.FailureReason}
}

// SopOverlayNode is one step's run state (upstream's NodeRunOverlay).
type SopOverlayNode struct {
	Step      uint32            `json:"step"`
	State     string            `json:"state"`
	ToolCalls []SopStepToolCall `json:"tool_calls,omitempty"`
}

// SopRunOverlay is a run projected onto its SOP's steps (upstream's RunOverlay), the result of
// sops/run-overlay and sops/decide.
type SopRunOverlay struct {
	RunID       string           `json:"run_id"`
	SopName     string           `json:"sop_name"`
	Status      string           `json:"status"`
	CurrentStep uint32           `json:"current_step"`
	TotalSteps  uint32           `json:"total_steps"`
	Waiting     bool             `json:"waiting"`
	Paused      bool             `json:"paused"`
	Nodes       []SopOverlayNode `json:"nodes"`
	// Ours: the gate shown, why the run failed, and what sops/decide did (resumed, denied, revised,
	// already_resolved or "pending_quorum (have/need)"; absent from sops/run-overlay).
	Gate          *SopGate `json:"gate,omitempty"`
	FailureReason string   `json:"failure_reason,omitempty"`
	Outcome       string   `json:"outcome,omitempty"`
}

// SopRunParams start a manual run. Payload is the step-1 input: JSON text, or empty/null for none.
type SopRunParams struct {
	Name    string  `json:"name"`
	Payload *string `json:"payload"`
}

// SopRunResult names the run started (or the run a coalescing SOP folded the request into).
type SopRunResult struct {
	RunID string `json:"run_id"`
}

// SopRunsParams scope sops/runs to one SOP; null or absent lists every SOP's runs.
type SopRunsParams struct {
	Sop *string `json:"sop"`
}

// SopRunsResult lists runs newest started_at first: the active ones and the retained terminal ones.
type SopRunsResult struct {
	Runs []SopRunSummary `json:"runs"`
}

// SopRunOverlayParams select a SOP and one of its runs.
type SopRunOverlayParams struct {
	Name  string `json:"name"`
	RunID string `json:"run_id"`
}

// SopDecideParams resolve a run's gate; Decision is the raw wire value, decoded by ParseSopDecision.
type SopDecideParams struct {
	Name     string          `json:"name"`
	RunID    string          `json:"run_id"`
	Decision json.RawMessage `json:"decision"`
	// Step and GateRevision (ours, optional) bind the answer to the gate the person saw (the run's gate.step
	// and gate.revision): an answer to a gate that has moved on resolves nothing.
	Step         *uint32 `json:"step,omitempty"`
	GateRevision *int    `json:"gate_revision,omitempty"`
}

// Decision kinds (upstream's ApprovalDecision variants).
const (
	SopDecisionApprove = "approve"
	SopDecisionDeny    = "deny"
	SopDecisionAmend   = "amend"
	SopDecisionRevise  = "revise"
)

// SopDecision is upstream's ApprovalDecision: "approve" | {"deny":{"reason"?}} | {"amend":{"text"}} |
// {"revise":{"guidance"}}. Text carries the deny reason, the amend text or the revise guidance.
type SopDecision struct {
	Kind string
	Text string
}

// MarshalJSON writes the externally tagged form serde writes.
func (d SopDecision) MarshalJSON() ([]byte, error) {
	switch d.Kind {
	case SopDecisionApprove:
		return []byte(`"approve"`), nil
	case SopDecisionDeny:
		var body struct {
			Reason string `json:"reason,omitempty"`
		}
		body.Reason = d.Text
		return json.Marshal(map[string]any{"deny": body})
	case SopDecisionAmend:
		return json.Marshal(map[string]any{"amend": map[string]string{"text": d.Text}})
	case SopDecisionRevise:
		return json.Marshal(map[string]any{"revise": map[string]string{"guidance": d.Text}})
	}
	return nil, fmt.Errorf("api: decision kind %q: want approve, deny, amend or revise", d.Kind)
}

// UnmarshalJSON reads the forms serde accepts: a bare "approve" (or "deny": a unit-like deny is refused by
// serde, so by us too), or a one-key object whose body carries the variant's field. Unknown fields inside a
// body are ignored as serde ignores them; a missing required field is an error.
func (d *SopDecision) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == SopDecisionApprove {
			*d = SopDecision{Kind: SopDecisionApprove}
			return nil
		}
		return fmt.Errorf("unknown variant `%s`, expected one of `approve`, `deny`, `amend`, `revise`", s)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return errors.New("expected \"approve\" or an object {\"deny\"|\"amend\"|\"revise\": {...}}")
	}
	if len(obj) != 1 {
		return errors.New("expected an object with exactly one key: deny, amend or revise")
	}
	for k, v := range obj {
		var body struct {
			Reason   *string `json:"reason"`
			Text     *string `json:"text"`
			Guidance *string `json:"guidance"`
		}
		if k != SopDecisionApprove {
			if v = bytes.TrimSpace(v); len(v) == 0 || v[0] != '{' {
				return fmt.Errorf("%s: expected an object", k)
			}
			if err := json.Unmarshal(v, &body); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		switch k {
		case SopDecisionApprove:
			*d = SopDecision{Kind: SopDecisionApprove}
		case SopDecisionDeny:
			*d = SopDecision{Kind: SopDecisionDeny}
			if body.Reason != nil {
				d.Text = *body.Reason
			}
		case SopDecisionAmend:
			if body.Text == nil {
				return errors.New("amend: missing field `text`")
			}
			*d = SopDecision{Kind: SopDecisionAmend, Text: *body.Text}
		case SopDecisionRevise:
			if body.Guidance == nil {
				return errors.New("revise: missing field `guidance`")
			}
			*d = SopDecision{Kind: SopDecisionRevise, Text: *body.Guidance}
		default:
			return fmt.Errorf("unknown variant `%s`, expected one of `approve`, `deny`, `amend`, `revise`", k)
		}
	}
	return nil
}

// SopRunIDParams name one run (sops/run-get).
type SopRunIDParams struct {
	RunID string `json:"run_id"`
}

// SopCancelParams cancel an active run; Reason is recorded (default "cancelled by <who>").
type SopCancelParams struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason,omitempty"`
}

// SopResolveParams are upstream's /admin/sop/approve and /deny body: the run, and a deny's reason.
type SopResolveParams struct {
	RunID  string  `json:"run_id"`
	Reason *string `json:"reason"`
	// Step and GateRevision (ours, optional) bind the answer to the gate shown, as in SopDecideParams.
	Step         *uint32 `json:"step,omitempty"`
	GateRevision *int    `json:"gate_revision,omitempty"`
}

// Resolve outcomes (upstream's ResolveOutcome and BrokerOutcome labels). pending_quorum is written
// "pending_quorum (have/need)" and not_authorized "not_authorized (requires group 'g')" as upstream does.
const (
	SopOutcomeResumed         = "resumed"
	SopOutcomeDenied          = "denied"
	SopOutcomeRevised         = "revised"
	SopOutcomeAlreadyResolved = "already_resolved"
	SopOutcomeNotWaiting      = "not_waiting"
	SopOutcomeRejectedSelf    = "rejected_self_approval"
	SopOutcomeDeferred        = "deferred_at_capacity"
	SopOutcomePendingQuorum   = "pending_quorum"
	SopOutcomeNotAuthorized   = "not_authorized"
	SopOutcomePolicyMissing   = "policy_missing"
)

// SopResolveResult is upstream's {outcome, run_id}.
type SopResolveResult struct {
	Outcome string `json:"outcome"`
	RunID   string `json:"run_id"`
}

// Pending kinds: a run at an approval gate, or a deterministic run paused at a checkpoint.
const (
	SopPendingApproval   = "approval"
	SopPendingCheckpoint = "checkpoint"
)

// SopPendingRun is one row of upstream's GET /admin/sop/pending.
type SopPendingRun struct {
	RunID        string  `json:"run_id"`
	SopName      string  `json:"sop_name"`
	Step         uint32  `json:"step"`
	TotalSteps   uint32  `json:"total_steps"`
	WaitingSince *string `json:"waiting_since"`
	Kind         string  `json:"kind"`
}

// SopPendingResult is upstream's {pending:[...]}.
type SopPendingResult struct {
	Pending []SopPendingRun `json:"pending"`
}

// SopSubscribeResult opens a live runs feed: the snapshot the feed continues from, and the id its
// notifications carry.
type SopSubscribeResult struct {
	SubscriptionID string          `json:"subscription_id"`
	Runs           []SopRunSummary `json:"runs"`
}

// SopUnsubscribeParams name a feed of this connection.
type SopUnsubscribeParams struct {
	SubscriptionID string `json:"subscription_id"`
}

// SopUnsubscribeResult says whether the feed existed.
type SopUnsubscribeResult struct {
	Unsubscribed bool `json:"unsubscribed"`
}

// SopRunChanged is the NotifySopsRun notification.
type SopRunChanged struct {
	SubscriptionID string        `json:"subscription_id"`
	Run            SopRunSummary `json:"run"`
}

// SopLagged is the NotifySopsLagged notification: missed changes were dropped for this slow subscriber.
type SopLagged struct {
	SubscriptionID string `json:"subscription_id"`
	Missed         uint64 `json:"missed"`
}
