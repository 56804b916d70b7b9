package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Message is re-exported so the session layer can name a model context without importing provider.
type Message = provider.Message

// TurnRecorder collects the messages of one turn as Turn.Append produces them (the chat encoding of history.go),
// in the ACP store's shape: an assistant message that called tools carries its calls and, as they run, their
// results. The turn is then stored in one transaction (store.ACPStore.AppendTurn). Append never fails.
type TurnRecorder struct {
	msgs []store.ACPMessage
}

// Append records one message; it has Turn.Append's signature.
func (r *TurnRecorder) Append(_ context.Context, role, content string) error {
	switch role {
	case provider.RoleAssistant:
		if sc, ok := decodeToolCalls(content); ok {
			m := store.ACPMessage{Role: role, Content: sc.Text}
			for _, c := range sc.Calls {
				m.Calls = append(m.Calls, store.ACPToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
			}
			r.msgs = append(r.msgs, m)
			return nil
		}
	case provider.RoleTool:
		res, ok := decodeToolResult(content)
		if !ok {
			return nil // Turn only appends encoded results
		}
		outcome := store.ACPOutcomeSuccess
		if res.IsError {
			outcome = store.ACPOutcomeFailure
		}
		for i := len(r.msgs) - 1; i >= 0; i-- {
			m := &r.msgs[i]
			for _, c := range m.Calls {
				if c.ID == res.ToolCallID {
					m.Results = append(m.Results, store.ACPToolResult{ID: res.ToolCallID, Name: res.Name, Content: res.Content, Outcome: outcome})
					return nil
				}
			}
		}
		return nil // answers no recorded call: dropped, as DecodeHistory drops it
	}
	r.msgs = append(r.msgs, store.ACPMessage{Role: role, Content: content})
	return nil
}

// Messages returns what was recorded, in order.
func (r *TurnRecorder) Messages() []store.ACPMessage { return r.msgs }

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

// LoadACPHistory reads ACP session id's stored messages and decodes them with ACPHistory.
func LoadACPHistory(ctx context.Context, st *store.ACPStore, id string) ([]provider.Message, error) {
	msgs, err := st.Messages(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("agent: load acp history %s: %w", id, err)
	}
	return ACPHistory(msgs), nil
}
