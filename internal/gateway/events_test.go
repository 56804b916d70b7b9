package gateway

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/logs"
)

// testHub is a real hub that persists nothing, with events 1..n published.
func testHub(t *testing.T, n int, message func(i int) string) *logs.Hub {
	t.Helper()
	hub := logs.NewHub(logs.Options{Path: filepath.Join(t.TempDir(), "trace.jsonl"),
		Persistence: func() logs.Persistence { return logs.Persistence{Mode: logs.ModeNone} }})
	t.Cleanup(func() { _ = hub.Close() })
	for i := 1; i <= n; i++ {
		hub.Publish(logs.Entry{Category: logs.CategorySystem, Action: "note", Message: message(i)})
	}
	return hub
}

func messages(t *testing.T, frames [][]byte) []string {
	t.Helper()
	var out []string
	for _, f := range frames {
		var e struct {
			Type, Message string
		}
		if err := json.Unmarshal(f, &e); err != nil || e.Type != "log" {
			t.Fatalf("frame %s: %v", f, err)
		}
		out = append(out, e.Message)
	}
	return out
}

// The history is the newest events, oldest first, bounded by count and by bytes whatever the ring holds.
func TestRecentFramesBounded(t *testing.T) {
	hub := testHub(t, 700, func(i int) string { return fmt.Sprintf("event %d", i) })
	got := messages(t, recentFrames(t.Context(), hub, maxHistoryEvents, maxHistoryBytes, nil))
	if len(got) != maxHistoryEvents || got[0] != "event 201" || got[len(got)-1] != "event 700" {
		t.Fatalf("%d events, %q .. %q; want 500, event 201 .. event 700", len(got), got[0], got[len(got)-1])
	}

	big := testHub(t, 50, func(i int) string { return fmt.Sprintf("%d %s", i, strings.Repeat("x", 10_000)) })
	frames := recentFrames(t.Context(), big, maxHistoryEvents, 64<<10, nil)
	total := 0
	for _, f := range frames {
		total += len(f) + 1
	}
	if got := messages(t, frames); len(got) == 0 || len(got) >= 10 || total > 64<<10 || !strings.HasPrefix(got[len(got)-1], "50 ") {
		t.Fatalf("%d events of %d bytes (want the newest, under 64 KiB)", len(got), total)
	}
	if frames := recentFrames(t.Context(), big, maxHistoryEvents, 100, nil); len(frames) != 0 {
		t.Fatalf("an event larger than the cap was kept: %d", len(frames))
	}
	if frames := recentFrames(t.Context(), testHub(t, 0, nil), maxHistoryEvents, maxHistoryBytes, nil); len(frames) != 0 {
		t.Fatalf("empty hub: %d", len(frames))
	}
}

// sseFrame leads with upstream's type and timestamp and keeps every field of the event.
func TestSSEFrame(t *testing.T) {
	for _, c := range []struct {
		category, action string
		severity         int
		want             string
	}{
		{"agent", "start", 0, "agent_start"},
		{"agent", "complete", 0, "agent_end"},
		{"agent", "fail", logs.SeverityWarn, "agent_end"},
		{"agent", "cancel", 0, "agent_end"},
		{"tool", "invoke", 0, "tool_call_start"},
		{"tool", "complete", 0, "tool_call"},
		{"session", "create", 0, "session_created"},
		{"session", "close", 0, "session_closed"},
		{"session", "delete", 0, "session_closed"},
		{"system", "save", 0, "log"},
		{"provider", "note", logs.SeverityError, "error"},
	} {
		line := fmt.Sprintf(`{"id":"x","@timestamp":"2026-01-02T03:04:05.000Z","severity_number":%d,"event":{"category":%q,"action":%q},"zeroclaw":{"session_key":"rpc_s"}}`,
			c.severity, c.category, c.action)
		var got map[string]any
		if err := json.Unmarshal(sseFrame([]byte(line)), &got); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got["type"] != c.want || got["timestamp"] != "2026-01-02T03:04:05.000Z" || got["id"] != "x" || got["zeroclaw"].(map[string]any)["session_key"] != "rpc_s" {
			t.Errorf("%s/%s: %v", c.category, c.action, got)
		}
	}
	for _, bad := range []string{"", "{}", "[1]", "{not json"} {
		if got := string(sseFrame([]byte(bad))); got != bad {
			t.Errorf("%q became %q", bad, got)
		}
	}
}
