package engine

import "errors"

// RunStatus is a run's lifecycle state (upstream's SopRunStatus, snake_case on the wire).
type RunStatus string

// The run states of §4.2.
const (
	StatusPending          RunStatus = "pending"
	StatusRunning          RunStatus = "running"
	StatusWaitingApproval  RunStatus = "waiting_approval"
	StatusPausedCheckpoint RunStatus = "paused_checkpoint"
	StatusCompleted        RunStatus = "completed"
	StatusFailed           RunStatus = "failed"
	StatusCancelled        RunStatus = "cancelled"
)

// Terminal reports whether s is one of the three terminal states.
func (s RunStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Parked reports whether s is a gate (the run waits for a person).
func (s RunStatus) Parked() bool { return s == StatusWaitingApproval || s == StatusPausedCheckpoint }

// StepStatus is a recorded step outcome (upstream's SopStepStatus).
type StepStatus string

// The step outcomes.
const (
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
)

// Event is one trigger delivery (upstream's SopEvent) plus Key, the source's dedup key: two deliveries with
// one non-empty Key admit one run.
type Event struct {
	Source    string  `json:"source"` // manual | mqtt | filesystem | cron | webhook | channel | ...
	Topic     *string `json:"topic"`
	Payload   *string `json:"payload"`
	Timestamp string  `json:"timestamp"`
	Key       string  `json:"key,omitempty"`
	Fresh     bool    `json:"-"` // sop.Event.Fresh: admitted whatever Key was seen; its run takes the key over
}

// ToolCall is one tool invocation made while a step ran (upstream's StepToolCall).
type ToolCall struct {
	Index      int    `json:"index"`
	Tool       string `json:"tool"`
	Args       any    `json:"args"`
	Success    bool   `json:"success"`
	Output     string `json:"output"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// StepResult is one executed step (upstream's SopStepResult). Attempt is ours: the 1-based try of this step
// in this run, so a retried or interrupted step is visible as such.
type StepResult struct {
	StepNumber     int        `json:"step_number"`
	Status         StepStatus `json:"status"`
	Output         string     `json:"output"`
	StartedAt      string     `json:"started_at"`
	CompletedAt    *string    `json:"completed_at"`
	EffectiveAgent string     `json:"effective_agent,omitempty"`
	ToolCalls      []ToolCall `json:"tool_calls,omitempty"`
	Attempt        int        `json:"attempt,omitempty"`
}

// InFlight is the step a driver has durably started and not yet recorded. After a crash it is what restore
// marks interrupted.
type InFlight struct {
	Step      int    `json:"step"`
	Attempt   int    `json:"attempt"`
	StartedAt string `json:"started_at"`
	SessionID string `json:"session_id,omitempty"`
}

// Gate is the gate a parked run shows: approval is bound to exactly this run, step and revision.
type Gate struct {
	Step     int      `json:"step"`
	Kind     string   `json:"kind"` // approval | checkpoint
	Revision int      `json:"revision"`
	Policy   string   `json:"policy,omitempty"`
	Votes    []string `json:"votes,omitempty"` // voter keys that approved (quorum)
}

// Run is a full run (upstream's SopRun, every field kept) with our additions after RevisionBase:
// FailureReason (#9783: the cause is stored and shown), the definition revision the run started with, the
// in-flight step, the current gate, and who started it.
type Run struct {
	RunID         string       `json:"run_id"`
	SopName       string       `json:"sop_name"`
	TriggerEvent  Event        `json:"trigger_event"`
	FrameMarkerID string       `json:"frame_marker_id"`
	Status        RunStatus    `json:"status"`
	CurrentStep   int          `json:"current_step"`
	TotalSteps    int          `json:"total_steps"`
	StartedAt     string       `json:"started_at"`
	CompletedAt   *string      `json:"completed_at"`
	StepResults   []StepResult `json:"step_results"`
	WaitingSince  *string      `json:"waiting_since"`
	LLMCallsSaved uint64       `json:"llm_calls_saved"`
	Revision      int          `json:"revision"`
	RevisionBase  int          `json:"revision_base"`

	FailureReason  string    `json:"failure_reason,omitempty"`
	SopRevision    string    `json:"sop_revision,omitempty"`
	InFlight       *InFlight `json:"in_flight,omitempty"`
	Gate           *Gate     `json:"gate,omitempty"`
	ApprovedStep   int       `json:"approved_step,omitempty"` // the gated step whose approval has been given
	GatesShown     int       `json:"gates_shown,omitempty"`   // gates resolved so far: the next gate's revision
	StartedBy      string    `json:"started_by,omitempty"`
	ExternalDriver bool      `json:"external_driver,omitempty"`
	PendingReason  string    `json:"pending_reason,omitempty"` // why a pending run waits (approval_capacity)
}

// RunSummary is a run's list row (upstream's SopRunSummary) plus FailureReason.
type RunSummary struct {
	RunID         string    `json:"run_id"`
	SopName       string    `json:"sop_name"`
	Status        RunStatus `json:"status"`
	CurrentStep   int       `json:"current_step"`
	TotalSteps    int       `json:"total_steps"`
	StartedAt     string    `json:"started_at"`
	CompletedAt   *string   `json:"completed_at"`
	TriggerSource string    `json:"trigger_source"`
	Active        bool      `json:"active"`
	FailureReason string    `json:"failure_reason,omitempty"`
}

// Summary projects r.
func (r *Run) Summary(active bool) RunSummary {
	return RunSummary{RunID: r.RunID, SopName: r.SopName, Status: r.Status, CurrentStep: r.CurrentStep,
		TotalSteps: r.TotalSteps, StartedAt: r.StartedAt, CompletedAt: r.CompletedAt,
		TriggerSource: r.TriggerEvent.Source, Active: active, FailureReason: r.FailureReason}
}

// NodeState is a step's state in an overlay.
type NodeState string

// The overlay node states.
const (
	NodePending   NodeState = "pending"
	NodeActive    NodeState = "active"
	NodeCompleted NodeState = "completed"
	NodeFailed    NodeState = "failed"
	NodeSkipped   NodeState = "skipped"
)

// OverlayNode is one step of an overlay.
type OverlayNode struct {
	Step      int        `json:"step"`
	State     NodeState  `json:"state"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Overlay is a run drawn over its SOP's steps (upstream's RunOverlay) plus the gate shown and the failure
// reason.
type Overlay struct {
	RunID         string        `json:"run_id"`
	SopName       string        `json:"sop_name"`
	Status        RunStatus     `json:"status"`
	CurrentStep   int           `json:"current_step"`
	TotalSteps    int           `json:"total_steps"`
	Waiting       bool          `json:"waiting"`
	Paused        bool          `json:"paused"`
	Nodes         []OverlayNode `json:"nodes"`
	Gate          *Gate         `json:"gate,omitempty"`
	FailureReason string        `json:"failure_reason,omitempty"`
}

// ResultKind is what a dispatch did with one SOP (upstream's DispatchResult variants).
type ResultKind string

// The dispatch outcomes.
const (
	Started       ResultKind = "started"
	Skipped       ResultKind = "skipped"
	Deferred      ResultKind = "deferred"
	Coalesced     ResultKind = "coalesced"
	BlockedUnsafe ResultKind = "blocked_unsafe"
	NoMatch       ResultKind = "no_match"
)

// Result is one SOP's dispatch outcome. RunID is the new run (Started) or the existing one (Coalesced).
type Result struct {
	Kind    ResultKind `json:"kind"`
	SopName string     `json:"sop_name,omitempty"`
	RunID   string     `json:"run_id,omitempty"`
	Reason  string     `json:"reason,omitempty"`
}

// PrincipalKind is where a decision or a start came from (upstream's approval principals).
type PrincipalKind string

// The principal kinds.
const (
	PrincipalAgent   PrincipalKind = "agent"
	PrincipalCLI     PrincipalKind = "cli"
	PrincipalWS      PrincipalKind = "ws"
	PrincipalHTTP    PrincipalKind = "http"
	PrincipalChannel PrincipalKind = "channel"
	PrincipalSystem  PrincipalKind = "system"
)

// Principal names who acts. The protocol layer has already checked the caller's grant; the engine applies
// approval_mode and the step policy's group and quorum.
type Principal struct {
	Kind PrincipalKind `json:"kind"`
	ID   string        `json:"id,omitempty"`
}

// String is the actor recorded in the ledger ("cli:alice", "system").
func (p Principal) String() string {
	if p.ID == "" {
		return string(p.Kind)
	}
	return string(p.Kind) + ":" + p.ID
}

// voterKey is the quorum key: distinct keys count as distinct approvers.
func (p Principal) voterKey() string {
	switch p.Kind {
	case PrincipalHTTP, PrincipalWS:
		return "gateway:" + p.ID
	default:
		return p.String()
	}
}

// DecisionKind is the operator's answer at a gate.
type DecisionKind string

// The decisions (upstream's "approve" | {"deny"} | {"amend"} | {"revise"}).
const (
	Approve DecisionKind = "approve"
	Deny    DecisionKind = "deny"
	Amend   DecisionKind = "amend"
	Revise  DecisionKind = "revise"
)

// Decision is an answer to a gate. Step and GateRevision, when set (non-zero Step, non-nil GateRevision),
// bind it to the gate the person saw: an answer to a superseded gate resolves nothing (ErrGateMoved).
type Decision struct {
	Kind         DecisionKind
	Reason       string // deny
	Text         string // amend
	Guidance     string // revise
	Step         int
	GateRevision *int
}

// Outcome is what a decision did (upstream's resolve outcomes).
type Outcome string

// The outcomes. The ones with an error return come with the matching sentinel.
const (
	OutcomeResumed              Outcome = "resumed"
	OutcomeDenied               Outcome = "denied"
	OutcomeRevised              Outcome = "revised"
	OutcomeAlreadyResolved      Outcome = "already_resolved"
	OutcomePendingQuorum        Outcome = "pending_quorum"
	OutcomeNotWaiting           Outcome = "not_waiting"
	OutcomeDeferredAtCapacity   Outcome = "deferred_at_capacity"
	OutcomeRejectedSelfApproval Outcome = "rejected_self_approval"
	OutcomeNotAuthorized        Outcome = "not_authorized"
	OutcomePolicyMissing        Outcome = "policy_missing"
)

// StoreStatus says where runs live. Durable is false for the memory backend; Reason says why when that was
// not asked for (runs.db failed to open), and status and doctor show it loudly.
type StoreStatus struct {
	Backend string `json:"backend"` // sqlite | memory
	Durable bool   `json:"durable"`
	Path    string `json:"path,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Status is the engine's report for status and doctor.
type Status struct {
	Store        StoreStatus `json:"store"`
	Loaded       int         `json:"loaded"`
	ActiveRuns   int         `json:"active_runs"`
	WaitingRuns  int         `json:"waiting_runs"`
	FinishedRuns int         `json:"finished_runs"`
	Driver       bool        `json:"driver"` // false: no turn seam, execute steps fail closed
	RestoredRuns int         `json:"restored_runs"`
	Interrupted  int         `json:"interrupted_steps"`
}

// Sentinels; errmap maps them (sopsurf's lane) to wire codes. Messages are prefixed with the package.
var (
	ErrNotFound        = errors.New("sop engine: run not found")
	ErrSOPNotFound     = errors.New("sop engine: SOP not loaded")
	ErrWrongSOP        = errors.New("sop engine: run belongs to another SOP")
	ErrNotWaiting      = errors.New("sop engine: run is not waiting at a gate")
	ErrGateMoved       = errors.New("sop engine: the gate answered is no longer the one shown")
	ErrAtCapacity      = errors.New("sop engine: no run slot free")
	ErrSelfApproval    = errors.New("sop engine: an agent may not approve this gate")
	ErrNotAuthorized   = errors.New("sop engine: principal is not authorized for this gate")
	ErrPolicyMissing   = errors.New("sop engine: approval policy is not configured")
	ErrInvalidDecision = errors.New("sop engine: invalid decision")
	ErrDriven          = errors.New("sop engine: the step is executed by the engine")
	ErrNotDriver       = errors.New("sop engine: the run is driven by another agent")
	ErrNoSteps         = errors.New("sop engine: SOP has no steps defined")
	ErrNoManualTrigger = errors.New("sop engine: SOP has no matching manual trigger")
	ErrNotActive       = errors.New("sop engine: run is already finished")
	ErrClosed          = errors.New("sop engine: closed")
	ErrInvalidPayload  = errors.New("sop engine: invalid payload")
)
