package e2e

import (
	"strings"
	"testing"
)

// kill -9 in the middle of a turn of a durable ACP session (chat_mode "acp"): after a restart the resumed
// session has its whole history, the interrupted turn's prompt and exactly one visible interruption marker, and
// the provider's next request carries the history but never the marker.
func TestKill9MidTurnACPSession(t *testing.T) {
	t.Parallel()
	url, lastBody := stallingBackend(t)
	h, root := homeWithOpenAI(t, "fake", url)
	_, sock, turnID := killMidSecondTurn(t, h, root, "acp-crash", map[string]any{"chat_mode": "acp"})
	c2 := dialStream(t, sock)
	c2.Request("session/state", map[string]any{"session_id": "acp-crash"}, 10)
	if st := c2.Result(10); st["state"] != "idle" || st["last_turn_interrupted"] != true || st["interrupted_turn_id"] != turnID {
		t.Errorf("session/state before the resume: %v, want idle with turn %s interrupted", st, turnID)
	}

	transcript := func(id int) string {
		t.Helper()
		c2.Request("session/messages", map[string]any{"session_id": "acp-crash"}, id)
		var got []string
		for _, m := range c2.Result(id)["messages"].([]any) {
			mm := m.(map[string]any)
			got = append(got, mm["role"].(string)+":"+mm["content"].(string))
		}
		return strings.Join(got, "|")
	}
	c2.Request("session/new", map[string]any{"session_id": "acp-crash", "chat_mode": "acp"}, 11)
	if r := c2.Result(11); r["message_count"] != float64(4) {
		t.Fatalf("resumed session: %v, want 4 messages", r)
	}
	// Closing and resuming again, live or not, adds no second marker.
	c2.Request("session/close", map[string]any{"session_id": "acp-crash"}, 12)
	c2.Result(12)
	c2.Request("session/new", map[string]any{"session_id": "acp-crash", "chat_mode": "acp"}, 13)
	c2.Result(13)
	marker := "interruption:[interrupted] The previous turn did not finish"
	got := transcript(14)
	if !strings.HasPrefix(got, "user:first question|assistant:answer-1|user:second question|"+marker) ||
		strings.Count(got, "interruption:") != 1 {
		t.Fatalf("history after kill -9 and resume:\n%s", got)
	}
	c2.Request("session/prompt", map[string]any{"session_id": "acp-crash", "prompt": "third question"}, 15)
	if r := c2.Result(15); r["outcome"] != "completed" || r["content"] != "answer-3" {
		t.Fatalf("turn after the crash: %v", r)
	}
	next := lastBody()
	if !strings.Contains(next, "first question") || !strings.Contains(next, "answer-1") || !strings.Contains(next, "second question") {
		t.Errorf("the provider's request after the crash lacks the history: %s", next)
	}
	if strings.Contains(next, "interrupted") || strings.Contains(next, "interruption") || strings.Contains(next, "partial-answer") {
		t.Errorf("the provider's request after the crash carries the marker or the lost partial answer: %s", next)
	}
	if got := transcript(16); !strings.HasSuffix(got, "|user:third question|assistant:answer-3") || strings.Count(got, "interruption:") != 1 {
		t.Fatalf("history after the next turn:\n%s", got)
	}
}
