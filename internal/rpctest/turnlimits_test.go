package rpctest

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// endlessSSE streams OpenAI chunks made by chunk(i) until the client goes away, then closes gone.
func endlessSSE(head string, chunk func(i int) string, gone chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", ctSSE)
		w.WriteHeader(http.StatusOK)
		if _, err := fmt.Fprint(w, head); err != nil {
			return
		}
		for i := 0; r.Context().Err() == nil; i++ {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", chunk(i)); err != nil {
				return
			}
			if i%32 == 0 {
				w.(http.Flusher).Flush()
			}
		}
	}
}

// A model that never stops talking, or never stops writing a tool call's arguments, ends the turn with an
// error naming the [limits] key; the answer sent and stored is the part that fit, and the backend's request
// is cancelled.
func TestTurnLimitsOverSocket(t *testing.T) {
	t.Parallel()
	const maxAnswer, maxArgs = 65536, 16384
	textGone, argsGone := make(chan struct{}), make(chan struct{})
	text := newLLM(t, endlessSSE("", func(int) string {
		return `{"choices":[{"index":0,"delta":{"content":"all work and no play "},"finish_reason":null}]}`
	}, textGone))
	args := newLLM(t, endlessSSE(`data: {"choices":[{"index":0,"delta":{"content":"Running it."},"finish_reason":null}]}`+"\n\n"+
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"shell","arguments":"{\"command\":\"echo "}}]},"finish_reason":null}]}`+"\n\n",
		func(int) string {
			return `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"}}]},"finish_reason":null}]}`
		}, argsGone))
	cfg := agentConfig(fakeProviderTOML("openai", text.URL), "openai.fake", "full",
		strings.Replace(fakeProviderTOML("openai", args.URL), "openai.fake", "openai.args", 1)+
			"\n[agents.b]\nmodel_provider = \"openai.args\"\nrisk_profile = \"full\"\n"+
			fmt.Sprintf("\n[limits]\nmax_answer_bytes = %d\nmax_tool_args_bytes = %d\n", maxAnswer, maxArgs))
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")

	t.Run("answer", func(t *testing.T) {
		s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
		tr := c.prompt(s.SessionID, "talk", hooks{})
		if tr.err != nil {
			t.Fatalf("prompt: %s", tr.err)
		}
		done := tr.events[len(tr.events)-1]
		if done.Type != api.UpdateTurnComplete || done.Outcome != api.OutcomeFailed || done.Content == nil ||
			!contains(done.Error, "limits.max_answer_bytes") || !contains(done.Error, "65536 bytes") || !contains(done.Error, "openai.fake") {
			t.Fatalf("turn_complete = %+v", done)
		}
		got := *done.Content
		if len(got) > maxAnswer || len(got) < maxAnswer-64 || !strings.HasPrefix(got, "all work and no play ") {
			t.Fatalf("turn_complete content is %d bytes, want the %d that fit", len(got), maxAnswer)
		}
		if tr.result.Outcome != api.OutcomeFailed || tr.result.Content != got {
			t.Fatalf("prompt result %q / %d bytes differs from turn_complete", tr.result.Outcome, len(tr.result.Content))
		}
		var streamed int
		for _, ev := range only(tr.events, api.UpdateAgentMessageChunk) {
			streamed += len(ev.Text)
		}
		if streamed != len(got) {
			t.Fatalf("%d bytes streamed as chunks, %d in the answer", streamed, len(got))
		}
		msgs := c.messages(s.SessionID).Messages
		if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content != got {
			t.Fatalf("stored last message: %s, %d bytes; want the capped answer", last.Role, len(last.Content))
		}
		waitClosed(t, textGone, "the cancelled backend request")
		if st := c.state(s.SessionID); st != "error" {
			t.Fatalf("state %q after a failed turn", st)
		}
	})

	t.Run("tool arguments", func(t *testing.T) {
		s := c.newSession(api.SessionNewParams{AgentAlias: "b"})
		tr := c.prompt(s.SessionID, "run something", hooks{})
		if tr.err != nil {
			t.Fatalf("prompt: %s", tr.err)
		}
		done := tr.events[len(tr.events)-1]
		if done.Outcome != api.OutcomeFailed || !contains(done.Error, "limits.max_tool_args_bytes") || !contains(done.Error, "16384 bytes") {
			t.Fatalf("turn_complete = %+v", done)
		}
		if n := len(only(tr.events, api.UpdateToolCall)); n != 0 {
			t.Fatalf("%d tool_call events for a call over the limit", n)
		}
		if done.Content == nil || *done.Content != "Running it." {
			t.Fatalf("content %v, want the text streamed before the call", done.Content)
		}
		var roles []string
		for _, m := range c.messages(s.SessionID).Messages {
			roles = append(roles, m.Role+":"+m.Content)
		}
		if strings.Join(roles, "|") != "user:run something|assistant:Running it." {
			t.Fatalf("stored history %q", roles)
		}
		waitClosed(t, argsGone, "the cancelled backend request")
	})
}

// A dead backend fails the turn within timeout_secs, not once per retry: a closed port is retried briefly and
// reported as refused, and a server that accepts and never answers gets one connection, reported as silent
// for longer than timeout_secs. Both errors name the provider.
func TestDeadBackendFailsWithinTimeout(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + closed.Addr().String()
	closed.Close()

	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			nc, err := hole.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			held = append(held, nc)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		hole.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, nc := range held {
			nc.Close()
		}
	})

	providers := fmt.Sprintf("[providers.models.openai.refused]\nuri = %q\nmodel = \"m\"\ntimeout_secs = 1\n\n"+
		"[providers.models.ollama.hole]\nuri = %q\nmodel = \"m\"\ntimeout_secs = 1\n", refusedURL, "http://"+hole.Addr().String())
	d := Start(t, WithConfig(agentConfig(providers, "openai.refused", "full",
		"\n[agents.b]\nmodel_provider = \"ollama.hole\"\nrisk_profile = \"full\"\n")))
	c := dialRC(t, d, "")

	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	tr := c.prompt(s.SessionID, "hello?", hooks{})
	done := tr.events[len(tr.events)-1]
	if tr.err != nil || done.Outcome != api.OutcomeFailed || !contains(done.Error, "openai.refused") ||
		!contains(done.Error, "connection refused") || !contains(done.Error, "gave up after") || !contains(done.Error, "timeout_secs") {
		t.Fatalf("refused: %s / turn_complete %+v", tr.err, done)
	}

	s = c.newSession(api.SessionNewParams{AgentAlias: "b"})
	tr = c.prompt(s.SessionID, "hello?", hooks{})
	done = tr.events[len(tr.events)-1]
	if tr.err != nil || done.Outcome != api.OutcomeFailed || !contains(done.Error, "ollama.hole") || !contains(done.Error, "timeout_secs") {
		t.Fatalf("blackhole: %s / turn_complete %+v", tr.err, done)
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the silent backend got %d connections, want 1", n)
	}
}

// waitClosed fails the test if ch is not closed soon; a liveness guard, not a timing assertion.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never happened", what)
	}
}
