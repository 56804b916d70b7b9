package journal

import (
	"encoding/json"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

func TestDecodeHistoryRepairsAndKeepsText(t *testing.T) {
	calls := []provider.ToolCall{{ID: "a", Name: "time", Arguments: json.RawMessage(`{}`)}, {ID: "b", Name: "time"}}
	rows := []store.Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", Content: EncodeToolCalls("thinking", calls)},
		{Role: "tool", Content: EncodeToolResult("a", "time", "now", false)},
		// b has no result: the turn crashed. Then an orphan result and a JSON-looking answer.
		{Role: "user", Content: "again"},
		{Role: "tool", Content: EncodeToolResult("zz", "time", "orphan", false)},
		{Role: "assistant", Content: `{"tool_calls":[]}`},
		{Role: "weird", Content: "skip me"},
	}
	got := DecodeHistory(rows)
	want := []provider.Message{
		{Role: "user", Content: "q"},
		{Role: "assistant", Content: "thinking", ToolCalls: []provider.ToolCall{calls[0], {ID: "b", Name: "time", Arguments: json.RawMessage(`{}`)}}},
		{Role: "tool", ToolCallID: "a", Name: "time", Content: "now"},
		{Role: "tool", ToolCallID: "b", Name: "time", Content: interruptedText},
		{Role: "user", Content: "again"},
		{Role: "assistant", Content: `{"tool_calls":[]}`},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Fatalf("history\n got %s\nwant %s", gb, wb)
	}
}
