package api

import "encoding/json"

// SessionNewParams are the params of session/new.
type SessionNewParams struct {
	AgentAlias         string `json:"agent_alias,omitempty"`
	Cwd                string `json:"cwd,omitempty"`
	SessionID          string `json:"session_id,omitempty"`
	ChatMode           string `json:"chat_mode,omitempty"` // "chat" (default) or "acp"
	InteractionSurface string `json:"interaction_surface,omitempty"`
}

// Chat modes of session/new: a chat session is stored in sessions.db, an ACP one in acp-sessions.db with the
// durable lifecycle of protocol.md §6.3.
const (
	ChatModeChat = "chat"
	ChatModeACP  = "acp"
)

// SessionNewResult is the result of session/new.
type SessionNewResult struct {
	SessionID    string `json:"session_id"`
	AgentAlias   string `json:"agent_alias"`
	MessageCount int    `json:"message_count"`
	WorkspaceDir string `json:"workspace_dir"`
}

// FileEntry is an attachment: one of Path (local peers only) or DataB64.
type FileEntry struct {
	Path     string `json:"path,omitempty"`
	DataB64  string `json:"data_b64,omitempty"`
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
}

// SessionPromptParams are the params of session/prompt.
type SessionPromptParams struct {
	SessionID   string      `json:"session_id"`
	Prompt      string      `json:"prompt"`
	Attachments []FileEntry `json:"attachments,omitempty"`
	// ClientTurnGeneration is the client's own turn counter; the turn's turn_complete echoes it, so a client
	// tells the end of this turn from a late end of an earlier one.
	ClientTurnGeneration *uint64 `json:"client_turn_generation,omitempty"`
}

// Turn outcomes.
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
	OutcomeFailed    = "failed"
)

// Stop reasons of session/prompt (upstream's SessionPromptResult.stop_reason).
const (
	StopEndTurn   = "end_turn"
	StopCancelled = "cancelled"
	StopError     = "error"
)

// StopReason maps a turn outcome to upstream's stop_reason: completed → end_turn, cancelled → cancelled,
// failed → error.
func StopReason(outcome string) string {
	switch outcome {
	case OutcomeCompleted:
		return StopEndTurn
	case OutcomeCancelled:
		return StopCancelled
	}
	return StopError
}

// SessionPromptResult is the result of session/prompt, written after turn_complete. StopReason is upstream's
// view of Outcome (StopReason(Outcome)).
type SessionPromptResult struct {
	SessionID  string `json:"session_id"`
	StopReason string `json:"stop_reason"`
	Outcome    string `json:"outcome"`
	Content    string `json:"content"`
}

// SessionIDParams is the params shape of methods that only name a session.
type SessionIDParams struct {
	SessionID string `json:"session_id"`
}

// SessionCancelResult is the result of session/cancel.
type SessionCancelResult struct {
	SessionID string `json:"session_id"`
	Cancelled bool   `json:"cancelled"`
}

// SessionCloseResult is the result of session/close.
type SessionCloseResult struct {
	SessionID string `json:"session_id"`
	Closed    bool   `json:"closed"`
}

// SessionDeleteResult is the result of session/delete.
type SessionDeleteResult struct {
	SessionID string `json:"session_id"`
	Deleted   bool   `json:"deleted"`
}

// SessionKillResult is the result of session/kill.
type SessionKillResult struct {
	SessionID string `json:"session_id"`
	Killed    bool   `json:"killed"`
}

// SessionListParams are the params of session/list.
type SessionListParams struct {
	Query string `json:"query,omitempty"`
	// Limit is the page size: 0 means DefaultSessionListLimit, more than MaxSessionListLimit is that.
	Limit int `json:"limit,omitempty"`
	// Offset (ours) skips that many rows of the listing: the next page of a result with has_more is asked with
	// its next_offset.
	Offset int `json:"offset,omitempty"`
}

// Page sizes of session/list and session/messages (ours: upstream answers every row when no limit is given;
// a page keeps a listing's cost and answer bounded whatever the history holds).
const (
	DefaultSessionListLimit     = 100
	MaxSessionListLimit         = 1000
	DefaultSessionMessagesLimit = 200
	MaxSessionMessagesLimit     = 1000
)

// SessionSummary is one row of session/list. SessionKey is the row's key in sessions.db; ChannelID names the
// channel a channel-originated session came from.
type SessionSummary struct {
	SessionID    string `json:"session_id"`
	SessionKey   string `json:"session_key"`
	CreatedAt    string `json:"created_at"`
	LastActivity string `json:"last_activity"`
	MessageCount int    `json:"message_count"`
	AgentAlias   string `json:"agent_alias,omitempty"`
	ChannelID    string `json:"channel_id,omitempty"`
	Name         string `json:"name,omitempty"`
	State        string `json:"state"`
	// LastTurnInterrupted: the last turn was still running when a previous daemon process ended (kill -9,
	// crash); InterruptedTurnID is that turn's id. Both are dropped when the next turn starts.
	LastTurnInterrupted bool   `json:"last_turn_interrupted,omitempty"`
	InterruptedTurnID   string `json:"interrupted_turn_id,omitempty"`
}

// SessionListResult is the result of session/list.
type SessionListResult struct {
	Sessions []SessionSummary `json:"sessions"`
	// HasMore and NextOffset (ours) say that rows beyond this page exist and the offset that asks for them.
	HasMore    bool `json:"has_more,omitempty"`
	NextOffset int  `json:"next_offset,omitempty"`
}

// SessionMessagesParams are the params of session/messages. A page holds the newest messages before
// BeforeIndex that fit in MaxBytes (at most the frame limit); the next older page is BeforeIndex = Start. Index
// asks for that one message alone, its content from byte ContentOffset: how a message cut to fit a page
// (Truncated) is read whole.
type SessionMessagesParams struct {
	SessionID     string `json:"session_id"`
	Limit         int    `json:"limit,omitempty"`
	BeforeIndex   *int   `json:"before_index,omitempty"`
	MaxBytes      *int   `json:"max_bytes,omitempty"`
	Index         *int   `json:"index,omitempty"`
	ContentOffset *int   `json:"content_offset,omitempty"`
}

// SessionMessage is one stored message. When Content is not the whole stored content (cut to fit the page,
// or read from an offset), ContentBytes is the whole content's length, ContentOffset where Content starts, and
// Truncated says whether more follows Content.
type SessionMessage struct {
	Index         int    `json:"index"`
	Role          string `json:"role"`
	Content       string `json:"content"`
	CreatedAt     string `json:"created_at"`
	Truncated     bool   `json:"truncated,omitempty"`
	ContentBytes  int    `json:"content_bytes,omitempty"`
	ContentOffset int    `json:"content_offset,omitempty"`
}

// SessionMessagesResult is the result of session/messages.
type SessionMessagesResult struct {
	SessionID string           `json:"session_id"`
	Messages  []SessionMessage `json:"messages"`
	Total     int              `json:"total"`
	Start     int              `json:"start"`
	HasOlder  bool             `json:"has_older"`
}

// SessionStateResult is the result of session/state.
type SessionStateResult struct {
	SessionID     string `json:"session_id"`
	State         string `json:"state"` // idle | running | error
	TurnID        string `json:"turn_id,omitempty"`
	TurnStartedAt string `json:"turn_started_at,omitempty"`
	// LastTurnInterrupted and InterruptedTurnID: as in SessionSummary.
	LastTurnInterrupted bool   `json:"last_turn_interrupted,omitempty"`
	InterruptedTurnID   string `json:"interrupted_turn_id,omitempty"`
}

// Approval decisions of session/approve.
const (
	DecisionAllowOnce      = "allow_once"
	DecisionAllowAlways    = "allow_always"
	DecisionReject         = "reject"
	DecisionRejectOnce     = "reject_once"
	DecisionRejectWithEdit = "reject_with_edit"
)

// SessionApproveParams are the params of session/approve.
type SessionApproveParams struct {
	SessionID   string          `json:"session_id"`
	RequestID   string          `json:"request_id"`
	Decision    string          `json:"decision"`
	Replacement json.RawMessage `json:"replacement,omitempty"`
}

// SessionApproveResult is the result of session/approve.
type SessionApproveResult struct {
	SessionID    string `json:"session_id"`
	RequestID    string `json:"request_id"`
	Acknowledged bool   `json:"acknowledged"`
}

// session/update event types (protocol.md §6.2).
const (
	UpdateAgentMessageChunk = "agent_message_chunk"
	UpdateAgentThoughtChunk = "agent_thought_chunk"
	UpdateToolCall          = "tool_call"
	UpdateToolResult        = "tool_result"
	UpdateApprovalRequest   = "approval_request"
	UpdateContextUsage      = "context_usage"
	UpdatePlan              = "plan"
	UpdateHistoryTrimmed    = "history_trimmed"
	UpdateTurnComplete      = "turn_complete"
	// UpdateNotice (ours) tells the user something about the turn that is not the model's output: level warn
	// and text, e.g. the cost budget's warning threshold reached.
	UpdateNotice = "notice"
)

// SessionUpdate is the params of one session/update notification. Type selects which fields are set.
type SessionUpdate struct {
	SessionID string `json:"session_id"`
	Type      string `json:"type"`

	Text string `json:"text,omitempty"` // agent_message_chunk, agent_thought_chunk

	ToolCallID string          `json:"tool_call_id,omitempty"` // tool_call, tool_result
	Name       string          `json:"name,omitempty"`
	RawInput   json.RawMessage `json:"raw_input,omitempty"`
	RawOutput  *string         `json:"raw_output,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`

	DroppedMessages *int   `json:"dropped_messages,omitempty"` // history_trimmed
	KeptTurns       *int   `json:"kept_turns,omitempty"`
	Reason          string `json:"reason,omitempty"`

	RequestID        string `json:"request_id,omitempty"` // approval_request
	ToolName         string `json:"tool_name,omitempty"`
	ArgumentsSummary string `json:"arguments_summary,omitempty"`
	TimeoutSecs      int    `json:"timeout_secs,omitempty"`
	Risk             string `json:"risk,omitempty"`     // approval_request: the call's risk (low, medium, high)
	Approver         string `json:"approver,omitempty"` // approval_request: "owner" when only the owner may approve it

	InputTokens      *int `json:"input_tokens,omitempty"` // context_usage
	OutputTokens     *int `json:"output_tokens,omitempty"`
	MaxContextTokens *int `json:"max_context_tokens,omitempty"` // the model's context window, when configured

	Entries []PlanEntry `json:"entries,omitempty"` // plan: the whole current plan (an empty plan is not sent)

	Level string `json:"level,omitempty"` // notice: "warn"

	Outcome string  `json:"outcome,omitempty"` // turn_complete
	Content *string `json:"content,omitempty"`
	Error   string  `json:"error,omitempty"`
	// ClientTurnGeneration (turn_complete) echoes the prompt's client_turn_generation when it had one.
	ClientTurnGeneration *uint64 `json:"client_turn_generation,omitempty"`
}

// PlanEntry is one item of a plan event, in upstream's shape. Status is pending, in_progress or completed;
// Priority high, medium or low; ActiveForm is the item phrased as ongoing work ("Running the tests").
type PlanEntry struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	Priority   string `json:"priority,omitempty"`
	ActiveForm string `json:"activeForm,omitempty"`
}

// ElicitationParams are the params of the daemon→client elicitation/create request (camelCase by design).
type ElicitationParams struct {
	SessionID       string         `json:"sessionId"`
	Mode            string         `json:"mode"`
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requestedSchema"`
}

// ElicitationResult is the client's answer to elicitation/create.
type ElicitationResult struct {
	Action  string         `json:"action"` // accept | decline | cancel
	Content map[string]any `json:"content,omitempty"`
}
