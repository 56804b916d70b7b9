package journal

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// What a turn with two tool calls (one failed) appends, recorded in the ACP shape and decoded back, is the same
// conversation DecodeHistory builds from the chat rows of the same turn.
func TestRecorderRoundTrip(t *testing.T) {
	calls := []provider.ToolCall{
		{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
		{ID: "c2", Name: "file_read", Arguments: json.RawMessage(`{"path":"x"}`)},
	}
	turn := []struct {
		m      provider.Message
		failed bool
	}{
		{m: provider.Message{Role: provider.RoleUser, Content: "look around"}},
		{m: provider.Message{Role: provider.RoleAssistant, Content: "let me see", ToolCalls: calls}},
		{m: provider.Message{Role: provider.RoleTool, ToolCallID: "c1", Name: "shell", Content: "a\nb"}},
		{m: provider.Message{Role: provider.RoleTool, ToolCallID: "c2", Name: "file_read", Content: "no such file"}, failed: true},
		{m: provider.Message{Role: provider.RoleAssistant, Content: "done"}},
	}
	var r Recorder
	var rows []store.Message
	for _, e := range turn {
		if e.m.Role == provider.RoleTool {
			r.AddResult(e.m, e.failed)
		} else {
			r.Add(e.m)
		}
		rows = append(rows, store.Message{Role: e.m.Role, Content: ChatContent(e.m, e.failed)})
	}
	got := r.Messages()
	want := []store.ACPMessage{
		{Role: "user", Content: "look around"},
		{Role: "assistant", Content: "let me see",
			Calls: []store.ACPToolCall{{ID: "c1", Name: "shell", Arguments: `{"command":"ls"}`}, {ID: "c2", Name: "file_read", Arguments: `{"path":"x"}`}},
			Results: []store.ACPToolResult{{ID: "c1", Name: "shell", Content: "a\nb", Outcome: store.ACPOutcomeSuccess},
				{ID: "c2", Name: "file_read", Content: "no such file", Outcome: store.ACPOutcomeFailure}}},
		{Role: "assistant", Content: "done"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded\n %+v\nwant\n %+v", got, want)
	}
	if h, d := ACPHistory(got), DecodeHistory(rows); !reflect.DeepEqual(h, d) {
		t.Errorf("ACPHistory\n %+v\ndiffers from DecodeHistory\n %+v", h, d)
	}
}

// A call whose result never reached the store (a crash) gets the interrupted result; system rows and reasoning
// never reach the provider.
func TestACPHistoryInterruptedAndSystem(t *testing.T) {
	h := ACPHistory([]store.ACPMessage{
		{Role: "system", Content: "old system prompt"},
		{Role: "user", Content: "go"},
		{Role: "assistant", Reasoning: "hidden", Calls: []store.ACPToolCall{{ID: "c1", Name: "shell", Arguments: "not json"}}},
	})
	want := []provider.Message{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "shell", Arguments: json.RawMessage("{}")}}},
		{Role: "tool", ToolCallID: "c1", Name: "shell", Content: interruptedText},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("ACPHistory =\n %+v\nwant\n %+v", h, want)
	}
}
