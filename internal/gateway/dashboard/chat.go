package dashboard

import (
	"encoding/json"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// The frames of /ws/chat, upstream's dashboard chat (crates/zeroclaw-gateway/src/ws.rs).

// ChatDecisions maps upstream's approval_response decisions to session/approve's; "edit" (ours) is
// reject_with_edit, its replacement arguments in the frame's "replacement".
var ChatDecisions = map[string]string{
	"approve": api.DecisionAllowOnce,
	"always":  api.DecisionAllowAlways,
	"deny":    api.DecisionRejectOnce,
	"edit":    api.DecisionRejectWithEdit,
}

// IsJSONObject reports whether raw is one JSON object.
func IsJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}

// ChatEventFrame is the /ws/chat frame of a session event (nil: not shown on this socket).
func ChatEventFrame(ev api.SessionUpdate) map[string]any {
	switch ev.Type {
	case api.UpdateAgentMessageChunk:
		return map[string]any{"type": "chunk", "content": ev.Text}
	case api.UpdateAgentThoughtChunk:
		return map[string]any{"type": "thinking", "content": ev.Text}
	case api.UpdateToolCall:
		args := ev.RawInput
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		return map[string]any{"type": "tool_call", "id": ev.ToolCallID, "name": ev.Name, "args": args}
	case api.UpdateToolResult:
		output := ""
		if ev.RawOutput != nil {
			output = *ev.RawOutput
		}
		return map[string]any{"type": "tool_result", "id": ev.ToolCallID, "name": ev.Name, "output": output}
	case api.UpdateApprovalRequest:
		// arguments_summary was made safe to show by the session layer (internal/visible).
		return map[string]any{"type": "approval_request", "request_id": ev.RequestID, "tool": ev.ToolName,
			"arguments_summary": ev.ArgumentsSummary, "timeout_secs": ev.TimeoutSecs}
	case api.UpdatePlan:
		return map[string]any{"type": "plan", "entries": ev.Entries}
	case api.UpdateHistoryTrimmed:
		return map[string]any{"type": "history_trimmed", "dropped_messages": Deref(ev.DroppedMessages),
			"kept_turns": Deref(ev.KeptTurns), "reason": ev.Reason}
	}
	return nil
}

// ChatDoneFrame is the done frame of a turn of agent that answered content with in and out tokens.
func ChatDoneFrame(cfg *config.Config, agent, content string, in, out int) map[string]any {
	family, _, _ := strings.Cut(cfg.Agents[agent].ModelProvider, ".")
	return map[string]any{"type": "done", "full_response": content, "input_tokens": in,
		"output_tokens": out, "tokens_used": in + out, "cost_usd": nil, "model": ModelOf(cfg, agent),
		"provider": family}
}

// Deref is *p, 0 for nil.
func Deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
