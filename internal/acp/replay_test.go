package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// session/load shows the interruption marker of a turn a daemon stop cut short as agent text, between the
// interrupted prompt and the next one.
func TestReplayShowsInterruptionMarker(t *testing.T) {
	got, err := json.Marshal(replay([]store.ACPMessage{
		{Role: "user", Content: "second question"},
		{Role: store.RoleInterruption, Content: "[interrupted] cut"},
		{Role: "user", Content: "third"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"second question"}},` +
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"[interrupted] cut"}},` +
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"third"}}]`
	if string(got) != want {
		t.Fatalf("replay =\n %s\nwant\n %s", got, want)
	}
	if strings.Count(string(got), "interrupted") != 1 {
		t.Fatal("marker replayed more than once")
	}
}
