package journal

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

var storedTurns = []store.ACPMessage{
	{ID: 1, Role: "user", Content: "one"},
	{ID: 2, Role: "assistant", Content: "first", Reasoning: "hidden thoughts"},
	{ID: 3, Role: store.RoleInterruption, Content: "[interrupted]"},
	{ID: 4, Role: "user", Content: "two"},
	{ID: 5, Role: "assistant", Content: "second"},
}

// Without a snapshot the history is replayed; an explicitly empty snapshot is authoritative (only what follows
// its boundary comes back); a snapshot is followed by the messages after its boundary. Interruption markers and
// reasoning never reach the context.
func TestACPContext(t *testing.T) {
	full, err := ACPContext(nil, 0, storedTurns)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Message{{Role: "user", Content: "one"}, {Role: "assistant", Content: "first"},
		{Role: "user", Content: "two"}, {Role: "assistant", Content: "second"}}
	if !reflect.DeepEqual(full, want) {
		t.Fatalf("replay = %+v", full)
	}
	empty := "[]"
	got, err := ACPContext(&empty, 3, storedTurns)
	if err != nil || !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("empty snapshot + later = %+v, %v; want only the turn after the boundary", got, err)
	}
	snap := EncodeSnapshot([]provider.Message{{Role: "user", Content: "summary q"}, {Role: "assistant", Content: "summary a"}})
	got, err = ACPContext(&snap, 3, storedTurns)
	wantSnap := append([]provider.Message{{Role: "user", Content: "summary q"}, {Role: "assistant", Content: "summary a"}}, want[2:]...)
	if err != nil || !reflect.DeepEqual(got, wantSnap) {
		t.Fatalf("snapshot + later = %+v, %v", got, err)
	}
	bad := "{not json"
	if _, err := ACPContext(&bad, 0, storedTurns); err == nil {
		t.Fatal("a corrupt snapshot was accepted")
	}
}

// The snapshot keeps tool calls and results, and leaves out system prompts.
func TestSnapshotRoundTrip(t *testing.T) {
	in := []provider.Message{
		{Role: "system", Content: "you are a bot"},
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "shell", Content: "a"},
	}
	s := EncodeSnapshot(in)
	if strings.Contains(s, "you are a bot") {
		t.Fatalf("snapshot holds the system prompt: %s", s)
	}
	out, err := DecodeSnapshot(s)
	if err != nil || !reflect.DeepEqual(out, in[1:]) {
		t.Fatalf("round trip = %+v, %v", out, err)
	}
	if EncodeSnapshot(nil) != "[]" {
		t.Fatalf("an empty context encodes as %s", EncodeSnapshot(nil))
	}
}

// Retain keeps the newest whole turns fitting in half the budget; nothing when the last turn alone is larger.
func TestRetain(t *testing.T) {
	turn := func(q string) []provider.Message {
		return []provider.Message{{Role: "user", Content: q}, {Role: "assistant", Content: "ok"}}
	}
	var msgs []provider.Message
	for _, q := range []string{"aaaa", "bbbb", "cccc"} {
		msgs = append(msgs, turn(q)...)
	} // each turn: (4+3)/4+4 + (2+3)/4+4 = 10 tokens
	kept, turns, dropped := Retain(msgs, 40)
	if turns != 2 || dropped != 2 || !reflect.DeepEqual(kept, msgs[2:]) {
		t.Fatalf("Retain(40) = %d turns, %d dropped, %+v", turns, dropped, kept)
	}
	kept, turns, dropped = Retain(msgs, 10)
	if turns != 0 || dropped != 6 || len(kept) != 0 {
		t.Fatalf("Retain(10) = %d turns, %d dropped, %+v; want nothing kept", turns, dropped, kept)
	}
	if EncodeSnapshot(kept) != "[]" {
		t.Fatal("nothing kept must store an explicitly empty snapshot")
	}
}
