package acp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// ACP session/update shapes (params.update.sessionUpdate).
type (
	updateParams struct {
		SessionID string `json:"sessionId"`
		Update    any    `json:"update"`
	}
	contentBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	textChunk struct {
		SessionUpdate string       `json:"sessionUpdate"`
		Content       contentBlock `json:"content"`
	}
	toolCallContent struct {
		Type    string       `json:"type"` // "content"
		Content contentBlock `json:"content"`
	}
	// toolCall is a tool_call update, and (without SessionUpdate) the toolCall of a permission request.
	toolCall struct {
		SessionUpdate string            `json:"sessionUpdate,omitempty"`
		ToolCallID    string            `json:"toolCallId"`
		Title         string            `json:"title,omitempty"`
		Kind          string            `json:"kind,omitempty"`
		Status        string            `json:"status,omitempty"`
		RawInput      json.RawMessage   `json:"rawInput,omitempty"`
		RawOutput     *string           `json:"rawOutput,omitempty"`
		Content       []toolCallContent `json:"content,omitempty"`
	}
)

// Update kinds and tool-call statuses of ACP.
const (
	updateUserChunk      = "user_message_chunk"
	updateToolCall       = "tool_call"
	updateToolCallUpdate = "tool_call_update"
	statusPending        = "pending"
	statusCompleted      = "completed"
	statusFailed         = "failed"
)

func textBlock(s string) contentBlock { return contentBlock{Type: "text", Text: s} }

// toolKind is the ACP kind of one of our tools, which clients use to pick an icon.
func toolKind(name string) string {
	switch name {
	case "shell":
		return "execute"
	case "file_read", "file_list":
		return "read"
	case "file_write", "file_edit":
		return "edit"
	}
	return "other"
}

func rawJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}

// toolCallStart is the tool_call update of a call the model asked for; it waits (for approval, or to run).
func toolCallStart(id, name string, rawInput json.RawMessage) toolCall {
	return toolCall{SessionUpdate: updateToolCall, ToolCallID: id, Title: visible.Escape(name), Kind: toolKind(name),
		Status: statusPending, RawInput: rawJSON(rawInput)}
}

// toolCallDone is the tool_call_update of a call that ran (or was refused, or cancelled: failed).
func toolCallDone(id, output string, failed bool) toolCall {
	status := statusCompleted
	if failed {
		status = statusFailed
	}
	return toolCall{SessionUpdate: updateToolCallUpdate, ToolCallID: id, Status: status, RawOutput: &output,
		Content: []toolCallContent{{Type: "content", Content: textBlock(output)}}}
}

// replay renders a stored transcript as the session/update payloads a client saw while it was produced: user
// and agent text, then each tool call and its outcome. Hidden reasoning is not replayed.
func replay(msgs []store.ACPMessage) []any {
	var out []any
	for _, m := range msgs {
		switch m.Role {
		case "user":
			out = append(out, textChunk{SessionUpdate: updateUserChunk, Content: textBlock(m.Content)})
		case store.RoleInterruption: // the turn a daemon stop cut short: shown, never sent to the model
			out = append(out, textChunk{SessionUpdate: api.UpdateAgentMessageChunk, Content: textBlock(m.Content)})
		case "assistant":
			if m.Content != "" {
				out = append(out, textChunk{SessionUpdate: api.UpdateAgentMessageChunk, Content: textBlock(m.Content)})
			}
			for _, c := range m.Calls {
				out = append(out, toolCallStart(c.ID, c.Name, json.RawMessage(c.Arguments)))
				done := false
				for _, r := range m.Results {
					if r.ID == c.ID && !done {
						out = append(out, toolCallDone(c.ID, r.Content, r.Outcome == store.ACPOutcomeFailure))
						done = true
					}
				}
				if !done { // the turn ended before the call produced a result
					out = append(out, toolCall{SessionUpdate: updateToolCallUpdate, ToolCallID: c.ID, Status: statusFailed})
				}
			}
		}
	}
	return out
}

// Permission options offered for an approval (acp.md), and the decisions they map to.
type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

var permissionOptions = []permissionOption{
	{OptionID: "allow-once", Name: "Allow once", Kind: "allow_once"},
	{OptionID: "allow-always", Name: "Allow always", Kind: "allow_always"},
	{OptionID: "reject-once", Name: "Reject", Kind: "reject_once"},
}

var optionDecisions = map[string]string{
	"allow-once":    api.DecisionAllowOnce,
	"allow-always":  api.DecisionAllowAlways,
	"reject-once":   api.DecisionRejectOnce,
	"reject-always": api.DecisionRejectOnce,
}

type permissionParams struct {
	SessionID string             `json:"sessionId"`
	Options   []permissionOption `json:"options"`
	ToolCall  toolCall           `json:"toolCall"`
}

type permissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}

// requestPermission asks the client about an approval_request with session/request_permission, on a goroutine of
// its own (Update must not block), and answers the session layer with the decision. A cancelled outcome, an
// unknown option, an error answer or a broken connection deny the call; a timeout leaves the session layer's own
// timer to deny it. The call is forgotten when the prompt returns.
func (k *sink) requestPermission(ev api.SessionUpdate) {
	k.mu.Lock()
	call := k.lastCall
	k.mu.Unlock()
	if call.id == "" {
		call.id = ev.RequestID
	}
	title := ev.ArgumentsSummary // "<tool>: <what it does>", escaped for display by the agent
	if title == "" {
		title = ev.ToolName
	}
	params := permissionParams{
		SessionID: k.sessionID,
		Options:   permissionOptions,
		ToolCall: toolCall{ToolCallID: call.id, Title: title, Kind: toolKind(call.name), Status: statusPending,
			RawInput: rawJSON(call.rawInput)},
	}
	timeout := time.Duration(ev.TimeoutSecs) * time.Second
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	k.calls.Add(1)
	k.p.calls.Add(1)
	go func() {
		defer k.p.calls.Done()
		defer k.calls.Done()
		ctx, cancel := context.WithTimeout(k.ctx, timeout)
		defer cancel()
		raw, err := k.p.conn.Call(ctx, MethodRequestPermission, params)
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			return
		}
		if err != nil && ctx.Err() != nil {
			return // the prompt is over: nothing is waiting for this answer
		}
		decision := api.DecisionRejectOnce
		var res permissionResult
		if err == nil && json.Unmarshal(raw, &res) == nil && res.Outcome.Outcome == "selected" {
			if d, ok := optionDecisions[res.Outcome.OptionID]; ok {
				decision = d
			}
		}
		if err != nil {
			k.s.log.Debug("acp: permission request failed: denied", "session", k.sessionID, "err", err)
		}
		_, _ = k.s.opts.Sessions.Approve(k.owner, api.SessionApproveParams{SessionID: k.sessionID, RequestID: ev.RequestID, Decision: decision})
	}()
}
