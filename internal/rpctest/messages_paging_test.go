package rpctest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

const frameLimit = 8 << 20 // protocol.md §2.1

// rawCall sends a request and returns the raw response frame, failing if any frame is over the frame limit.
func (c *rc) rawCall(method string, params any) (frame, int) {
	c.t.Helper()
	id := c.send(method, params)
	for {
		// 8 MB frames are slow to encode and decode under the race detector: a generous liveness bound.
		line, err := c.Recv(2 * time.Minute)
		if err != nil {
			c.t.Fatalf("%s: recv: %v", method, err)
		}
		if len(line)+1 > frameLimit {
			c.t.Fatalf("%s: a frame of %d bytes, over the %d-byte frame limit", method, len(line)+1, frameLimit)
		}
		var f frame
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			c.t.Fatalf("bad frame: %v", err)
		}
		f.Raw = line
		if f.Method == "" && idOf(f) == id {
			return f, len(line) + 1
		}
	}
}

// session/messages on a session whose history is far larger than a frame, with one message that alone encodes
// to nearly two frames (as the old daemon stored an endless answer): every answer fits the frame limit,
// walking before_index = start pages back through all of it, and a cut message is read whole with index +
// content_offset.
func TestSessionMessagesPagesLargeHistory(t *testing.T) {
	t.Parallel()
	model := newLLM(t, stream(ctSSE, openAIText(1, 1, "ok")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "full", "")))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := c.prompt(s.SessionID, "hi", hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("prompt: %s %+v", tr.err, tr.result)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	// Then, stored directly (turns this large are slow under the race detector): two 7 MB prompts answered
	// "ok", and a 10 MB answer full of characters JSON escapes, the way the old daemon stored an endless one.
	chat, err := store.OpenChat(t.Context(), filepath.Join(d.ConfigDir, "data", "sessions", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hi", "ok"}
	for i := range 2 {
		want = append(want, strings.Repeat(string(rune('a'+i)), 7_000_000), "ok")
	}
	want = append(want, strings.Repeat("line\n\"\u2028 ", 1_000_000)) // 10 MB stored, 15 MB as JSON
	for i, content := range want[2:] {
		role := "user"
		if i%2 == 1 || i == 4 {
			role = "assistant"
		}
		if _, err := chat.Append(t.Context(), store.RPCKey(s.SessionID), role, content, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	chat.Close()
	d = StartOn(t, d.ConfigDir)
	c = dialRC(t, d, "")

	// Page back from the end with the defaults.
	got := make([]string, len(want))
	cut := map[int]api.SessionMessage{}
	pages := 0
	params := api.SessionMessagesParams{SessionID: s.SessionID}
	for {
		f, _ := c.rawCall(api.MethodSessionMsgs, params)
		if f.Error != nil {
			t.Fatalf("session/messages: %s", f.Error)
		}
		var r api.SessionMessagesResult
		if err := json.Unmarshal(f.Result, &r); err != nil {
			t.Fatal(err)
		}
		pages++
		if r.Total != len(want) || len(r.Messages) == 0 || r.Start != r.Messages[0].Index || r.HasOlder != (r.Start > 0) {
			t.Fatalf("page %d: total %d start %d has_older %v, %d messages", pages, r.Total, r.Start, r.HasOlder, len(r.Messages))
		}
		for _, m := range r.Messages {
			got[m.Index] = m.Content
			if m.Truncated {
				if m.ContentBytes != len(want[m.Index]) || len(m.Content) >= m.ContentBytes {
					t.Fatalf("message %d cut to %d bytes, says content_bytes %d", m.Index, len(m.Content), m.ContentBytes)
				}
				cut[m.Index] = m
			}
		}
		if !r.HasOlder {
			break
		}
		start := r.Start
		params.BeforeIndex = &start
	}
	if pages != 3 {
		t.Fatalf("%d pages, want 3: the huge message alone, then one 7 MB prompt per page", pages)
	}
	const big = 6
	if _, ok := cut[big]; !ok || len(cut) != 1 {
		t.Fatalf("cut messages %v, want only the huge last one", cut)
	}
	// Read the rest of the cut message in slices.
	for off := len(got[big]); off < len(want[big]); {
		idx, o := big, off
		f, _ := c.rawCall(api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: s.SessionID, Index: &idx, ContentOffset: &o})
		var r api.SessionMessagesResult
		if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || len(r.Messages) != 1 {
			t.Fatalf("slice at %d: %s %s", off, f.Error, f.Raw[:min(len(f.Raw), 200)])
		}
		m := r.Messages[0]
		if m.Index != big || m.ContentOffset != off || m.ContentBytes != len(want[big]) || len(m.Content) == 0 || !utf8.ValidString(m.Content) {
			t.Fatalf("slice at %d: offset %d, content_bytes %d, %d bytes", off, m.ContentOffset, m.ContentBytes, len(m.Content))
		}
		got[big] += m.Content
		off += len(m.Content)
		if m.Truncated != (off < len(want[big])) {
			t.Fatalf("slice ending at %d says truncated=%v", off, m.Truncated)
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d reassembled to %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}

	// A smaller byte budget is honoured; limits stay honoured.
	budget := 100_000
	f, n := c.rawCall(api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: s.SessionID, MaxBytes: &budget})
	var r api.SessionMessagesResult
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || len(r.Messages) != 1 || r.Messages[0].Index != big ||
		!r.Messages[0].Truncated || n > budget+1024 {
		t.Fatalf("max_bytes page: %s, %d messages, %d bytes", f.Error, len(r.Messages), n)
	}
	before := big
	if f, _ = c.rawCall(api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: s.SessionID, Limit: 2, BeforeIndex: &before}); f.Error != nil ||
		json.Unmarshal(f.Result, &r) != nil || len(r.Messages) != 2 || r.Start != 4 || r.Messages[1].Content != "ok" {
		t.Fatalf("limit 2: %s, start %d, %d messages", f.Error, r.Start, len(r.Messages))
	}

	// Bad paging params are refused with -32602 and say why.
	zero, tiny, past, neg := 0, 10, 1<<30, -1
	for name, p := range map[string]api.SessionMessagesParams{
		"max_bytes":            {SessionID: s.SessionID, MaxBytes: &tiny},
		"index and before":     {SessionID: s.SessionID, Index: &zero, BeforeIndex: &zero},
		"offset without index": {SessionID: s.SessionID, ContentOffset: &zero},
		"offset past the end":  {SessionID: s.SessionID, Index: &zero, ContentOffset: &past},
		"negative index":       {SessionID: s.SessionID, Index: &neg},
		"negative offset":      {SessionID: s.SessionID, Index: &zero, ContentOffset: &neg},
	} {
		f, _ := c.rawCall(api.MethodSessionMsgs, p)
		if f.Error == nil || f.Error.Code != -32602 {
			t.Errorf("%s: got %s, want -32602", name, fmt.Sprint(f.Error))
		}
	}
}
