package journal

import (
	"encoding/json"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Compaction of a durable ACP session's model context (protocol.md §6.3). The visible transcript (acp_messages)
// is never changed; what shrinks is the context sent to the model, kept as a snapshot in the session's checkpoint
// with the last message id it covers. The next context is the snapshot followed by the messages stored after
// that boundary.

// CompactReason is the reason of a history_trimmed event sent after a compaction.
const CompactReason = "context_budget"

// snapshotMessage is one message of a stored snapshot: the provider roles only. System prompts, recalled memory
// and hidden reasoning are never part of it: the turn adds the system prompt itself, and reasoning is not kept
// in provider messages.
type snapshotMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []snapshotCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

type snapshotCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// EncodeSnapshot renders a model context as the JSON array stored in acp_checkpoints.snapshot_json, leaving out
// any system message. An empty context is "[]", an explicitly empty snapshot.
func EncodeSnapshot(msgs []provider.Message) string {
	out := make([]snapshotMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == provider.RoleSystem {
			continue
		}
		sm := snapshotMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			sm.ToolCalls = append(sm.ToolCalls, snapshotCall{ID: c.ID, Name: c.Name, Arguments: rawInput(c.Arguments)})
		}
		out = append(out, sm)
	}
	b, _ := json.Marshal(out) // strings and valid raw JSON only: cannot fail
	return string(b)
}

// rawInput returns args as a JSON value: "{}" when they are missing or not JSON.
func rawInput(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return args
}

// DecodeSnapshot parses a stored snapshot. Messages of a role no provider takes are dropped.
func DecodeSnapshot(snapshot string) ([]provider.Message, error) {
	var in []snapshotMessage
	if err := json.Unmarshal([]byte(snapshot), &in); err != nil {
		return nil, fmt.Errorf("journal: decode context snapshot: %w", err)
	}
	out := make([]provider.Message, 0, len(in))
	for _, sm := range in {
		switch sm.Role {
		case provider.RoleUser, provider.RoleAssistant, provider.RoleTool:
		default:
			continue
		}
		m := provider.Message{Role: sm.Role, Content: sm.Content, ToolCallID: sm.ToolCallID, Name: sm.Name}
		for _, c := range sm.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: rawInput(c.Arguments)})
		}
		out = append(out, m)
	}
	return out, nil
}

// ACPContext rebuilds an ACP session's model context from its stored messages and its latest checkpoint: with a
// snapshot (even an empty one, which is authoritative), the snapshot followed by the messages after boundary;
// without one, the whole history (ACPHistory).
func ACPContext(snapshot *string, boundary int64, msgs []store.ACPMessage) ([]provider.Message, error) {
	if snapshot == nil {
		return ACPHistory(msgs), nil
	}
	base, err := DecodeSnapshot(*snapshot)
	if err != nil {
		return nil, err
	}
	var later []store.ACPMessage
	for _, m := range msgs {
		if m.ID > boundary {
			later = append(later, m)
		}
	}
	return append(base, ACPHistory(later)...), nil
}

// EstimateTokens estimates the tokens a model context takes: its text bytes (content, tool names and arguments)
// divided by 4, rounded up, plus 4 per message for the framing.
func EstimateTokens(msgs []provider.Message) int {
	n := 0
	for _, m := range msgs {
		bytes := len(m.Content) + len(m.Name) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			bytes += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
		n += (bytes+3)/4 + 4
	}
	return n
}

// Retain picks what a compaction keeps of a model context over budget: the newest whole turns (a turn starts at
// a user message) that together fit in half the budget, so that the next turns have room before the next
// compaction. It returns the kept messages, how many turns they hold and how many messages were dropped. When not
// even the last turn fits, nothing is kept.
func Retain(msgs []provider.Message, budget int) (kept []provider.Message, keptTurns, dropped int) {
	var starts []int // index of the first message of each turn
	for i, m := range msgs {
		if i == 0 || m.Role == provider.RoleUser {
			starts = append(starts, i)
		}
	}
	from := len(msgs)
	for t := len(starts) - 1; t >= 0; t-- {
		if EstimateTokens(msgs[starts[t]:]) > budget/2 {
			break
		}
		from, keptTurns = starts[t], keptTurns+1
	}
	kept = append([]provider.Message{}, msgs[from:]...)
	return kept, keptTurns, from
}
