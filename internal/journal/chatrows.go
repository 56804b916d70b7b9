package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// How a turn is stored in the chat store, one row per message (state.md §4 has no columns for tool calls):
//
//   - role "user": the prompt text.
//   - role "assistant" without tool calls: the answer text.
//   - role "assistant" with tool calls: a JSON object
//     {"zeroclaw_tool_calls":[{"id":"...","name":"...","arguments":{...}}],"text":"..."}.
//   - role "tool": a JSON object
//     {"zeroclaw_tool_result":{"tool_call_id":"...","name":"...","content":"...","is_error":false}}.
//
// The marker keys make a stored tool row unambiguous: an assistant answer that happens to be JSON is decoded
// as text unless it has exactly this shape.

type storedCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type storedCalls struct {
	Calls []storedCall `json:"zeroclaw_tool_calls"`
	Text  string       `json:"text,omitempty"`
}

type storedResult struct {
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error,omitempty"`
}

type storedResultRow struct {
	Result *storedResult `json:"zeroclaw_tool_result"`
}

// ChatContent returns the stored content of message m in the chat store (its role is m.Role); failed marks a
// tool result that reports a failure.
func ChatContent(m provider.Message, failed bool) string {
	switch {
	case m.Role == provider.RoleAssistant && len(m.ToolCalls) > 0:
		return EncodeToolCalls(m.Content, m.ToolCalls)
	case m.Role == provider.RoleTool:
		return EncodeToolResult(m.ToolCallID, m.Name, m.Content, failed)
	}
	return m.Content
}

// EncodeToolCalls returns the stored content of an assistant message that called tools.
func EncodeToolCalls(text string, calls []provider.ToolCall) string {
	sc := storedCalls{Text: text, Calls: make([]storedCall, len(calls))}
	for i, c := range calls {
		args := c.Arguments
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		sc.Calls[i] = storedCall{ID: c.ID, Name: c.Name, Arguments: args}
	}
	b, _ := json.Marshal(sc) // only strings and valid raw JSON: cannot fail
	return string(b)
}

// EncodeToolResult returns the stored content of a tool result message.
func EncodeToolResult(callID, name, content string, isError bool) string {
	b, _ := json.Marshal(storedResultRow{Result: &storedResult{ToolCallID: callID, Name: name, Content: content, IsError: isError}})
	return string(b)
}

func decodeToolCalls(content string) (storedCalls, bool) {
	if !strings.HasPrefix(strings.TrimSpace(content), "{") {
		return storedCalls{}, false
	}
	var sc storedCalls
	if err := json.Unmarshal([]byte(content), &sc); err != nil || len(sc.Calls) == 0 {
		return storedCalls{}, false
	}
	return sc, true
}

func decodeToolResult(content string) (storedResult, bool) {
	var row storedResultRow
	if !strings.HasPrefix(strings.TrimSpace(content), "{") || json.Unmarshal([]byte(content), &row) != nil || row.Result == nil {
		return storedResult{}, false
	}
	return *row.Result, true
}

// interruptedText answers a stored tool call whose result never reached the store (a crash or cancel mid-turn),
// so the rebuilt conversation stays well formed for every provider.
const interruptedText = "interrupted: the turn ended before this call produced a result"

// DecodeHistory rebuilds the provider conversation from stored rows (see the encoding above). Unknown roles and
// system rows are skipped (this program never stores a system row: the turn adds the system prompt itself, and a
// system line of a legacy JSONL file read by the JSONL backend must not become one the model obeys), a tool row that cannot be decoded becomes a tool message with its raw content, and every tool call
// without a stored result gets an "interrupted" result right after its assistant message.
func DecodeHistory(rows []store.Message) []provider.Message {
	out := make([]provider.Message, 0, len(rows))
	var open []provider.ToolCall // calls of the last assistant message still waiting for results
	closeOpen := func() {
		for _, c := range open {
			out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: interruptedText})
		}
		open = nil
	}
	for _, r := range rows {
		switch r.Role {
		case provider.RoleUser:
			closeOpen()
			out = append(out, provider.Message{Role: r.Role, Content: r.Content})
		case provider.RoleAssistant:
			closeOpen()
			if sc, ok := decodeToolCalls(r.Content); ok {
				m := provider.Message{Role: provider.RoleAssistant, Content: sc.Text}
				for _, c := range sc.Calls {
					m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
				}
				out = append(out, m)
				open = append([]provider.ToolCall(nil), m.ToolCalls...)
				continue
			}
			out = append(out, provider.Message{Role: provider.RoleAssistant, Content: r.Content})
		case provider.RoleTool:
			res, ok := decodeToolResult(r.Content)
			if !ok {
				if len(open) == 0 {
					continue // an orphan result would be rejected by strict providers
				}
				res = storedResult{ToolCallID: open[0].ID, Name: open[0].Name, Content: r.Content}
			}
			idx := -1
			for i, c := range open {
				if c.ID == res.ToolCallID {
					idx = i
					break
				}
			}
			if idx < 0 {
				continue // answers no open call: drop it rather than confuse the model
			}
			open = append(open[:idx], open[idx+1:]...)
			out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: res.ToolCallID, Name: res.Name, Content: res.Content})
		}
	}
	closeOpen()
	return out
}

// LoadHistory reads the stored messages of the chat session stored under key and decodes them with
// DecodeHistory.
func LoadHistory(ctx context.Context, chat interface {
	All(ctx context.Context, key string) ([]store.Message, error)
}, key string) ([]provider.Message, error) {
	rows, err := chat.All(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("journal: load history %s: %w", key, err)
	}
	return DecodeHistory(rows), nil
}
