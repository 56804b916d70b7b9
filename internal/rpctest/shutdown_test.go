package rpctest

import (
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"testing"
)

// A client that stops reading must not hold the daemon's shutdown past the drain (protocol.md §2.1: "5.5 s,
// then connections are closed"), even when the write timeout is much longer than that. The drain is cut to
// 0.5 s so the test does not wait the real one.
func TestShutdownClosesStalledClientAfterDrain(t *testing.T) {
	t.Parallel()
	d := Start(t, withRPC("write_timeout_ms = 3600000\n"), WithDrainTimeout(500*time.Millisecond))
	c := d.Dial(t)
	c.Initialize()
	// Far more replies than the socket buffers hold; the client never reads them, so the writer blocks.
	req := `{"jsonrpc":"2.0","method":"health","id":1}` + "\n"
	c.SendRaw([]byte(strings.Repeat(req, 5000)))
	// Stop fails if Run has not returned within 15 s; the daemon must not wait for the write timeout.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A shutdown (SIGTERM) during a long turn cancels it: the client gets turn_complete:cancelled, then the prompt's
// response, then EOF; the provider request is aborted; Run returns; what was said is in the history after a
// restart.
func TestShutdownDuringLongTurn(t *testing.T) {
	t.Parallel()
	aborted := make(chan struct{})
	srv := newLLM(t, blockAfterFirst("Hel", nil, aborted))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", "")))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{})
	id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "hi"})
	stopped := make(chan error, 1)
	tr := c.await(id, hooks{onUpdate: func(u api.SessionUpdate) {
		if u.Type == api.UpdateAgentMessageChunk {
			go func() { stopped <- d.Stop() }()
		}
	}})
	if tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	wantKinds(t, tr.events, "agent_message_chunk:Hel", "turn_complete:cancelled")
	if tr.result.Outcome != api.OutcomeCancelled {
		t.Fatalf("prompt result = %+v", tr.result)
	}
	c.ExpectEOF(10 * time.Second)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider request was not aborted by the shutdown")
	}
	d2 := StartOn(t, d.ConfigDir)
	c2 := dialRC(t, d2, "")
	c2.newSession(api.SessionNewParams{SessionID: s.SessionID})
	var got []string
	for _, m := range c2.messages(s.SessionID).Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	if strings.Join(got, "|") != "user:hi|assistant:Hel" {
		t.Fatalf("history after restart = %q", got)
	}
}
