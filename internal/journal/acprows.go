package journal

import (
	"encoding/json"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Recorder collects the messages of one turn in the ACP store's shape: an assistant message that called tools
// carries its calls and, as they run, their results. The turn is then stored in one transaction
// (store.ACPStore.AppendTurn). It never fails.
type Recorder struct {
	msgs []store.ACPMessage
}

// Add records one message of the turn other than a tool result.
func (r *Recorder) Add(m provider.Message) {
	am := store.ACPMessage{Role: m.Role, Content: m.Content}
	if m.Role == provider.RoleAssistant {
		for _, c := range m.ToolCalls {
			am.Calls = append(am.Calls, store.ACPToolCall{ID: c.ID, Name: c.Name, Arguments: string(rawInput(c.Arguments))})
		}
	}
	r.msgs = append(r.msgs, am)
}

// AddResult records the result of a tool call with the assistant message that made the call; a result that
// answers no recorded call is dropped, as ACPHistory would drop it.
func (r *Recorder) AddResult(m provider.Message, failed bool) {
	outcome := store.ACPOutcomeSuccess
	if failed {
		outcome = store.ACPOutcomeFailure
	}
	for i := len(r.msgs) - 1; i >= 0; i-- {
		am := &r.msgs[i]
		for _, c := range am.Calls {
			if c.ID == m.ToolCallID {
				am.Results = append(am.Results, store.ACPToolResult{ID: m.ToolCallID, Name: m.Name, Content: m.Content, Outcome: outcome})
				return
			}
		}
	}
}

// Messages returns what was recorded, in order.
func (r *Recorder) Messages() []store.ACPMessage { return r.msgs }

// ACPHistory rebuilds the provider conversation from stored ACP messages. System messages are left out (the
// agent's system prompt is added by the turn), reasoning is never sent back, and every call without a stored
// result gets an "interrupted" result right after its results, so the conversation stays well formed.
func ACPHistory(msgs []store.ACPMessage) []provider.Message {
	out := make([]provider.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			out = append(out, provider.Message{Role: m.Role, Content: m.Content})
		case provider.RoleAssistant:
			am := provider.Message{Role: m.Role, Content: m.Content}
			for _, c := range m.Calls {
				args := json.RawMessage(c.Arguments)
				if !json.Valid(args) {
					args = json.RawMessage("{}")
				}
				am.ToolCalls = append(am.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
			}
			out = append(out, am)
			answered := map[string]bool{}
			for _, r := range m.Results {
				if answered[r.ID] || !hasCall(m.Calls, r.ID) {
					continue
				}
				answered[r.ID] = true
				out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: r.ID, Name: r.Name, Content: r.Content})
			}
			for _, c := range m.Calls {
				if !answered[c.ID] {
					out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: interruptedText})
				}
			}
		}
	}
	return out
}

func hasCall(calls []store.ACPToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}
