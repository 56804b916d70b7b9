package rpctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

const echoTOML = "[providers.models.echo.default]\nmodel = \"echo\"\n"

// openAIChunk is one SSE event carrying a text delta.
func openAIChunk(text string) []byte {
	q, _ := json.Marshal(text)
	return []byte(`data: {"id":"c","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"content":` + string(q) + `},"finish_reason":null}]}` + "\n\n")
}

// blockAfterFirst streams one chunk, then holds the response open until release is closed or the daemon aborts
// the request; aborted is closed when the request's context ends before release.
func blockAfterFirst(first string, release <-chan struct{}, aborted chan<- struct{}) http.HandlerFunc {
	var once sync.Once
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctSSE)
		w.WriteHeader(http.StatusOK)
		w.Write(openAIChunk(first))
		w.(http.Flusher).Flush()
		select {
		case <-release:
			for _, f := range wireFrames(openAIText(3, 2, " done")) {
				w.Write(f)
			}
		case <-r.Context().Done():
			if aborted != nil {
				once.Do(func() { close(aborted) })
			}
		}
	}
}

// session/cancel during a stream: turn_complete says cancelled and is the last event, the prompt result says
// cancelled, the provider's HTTP request is aborted, and the same session then runs a new turn.
func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	aborted := make(chan struct{})
	srv := newLLM(t, blockAfterFirst("Hel", nil, aborted), stream(ctSSE, openAIText(4, 1, "again")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", "")))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{})

	id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "hi"})
	var cancelID string
	var cancelled *frame
	onCancel := func(f frame) bool {
		if cancelID == "" || idOf(f) != cancelID {
			return false
		}
		cancelled = &f
		return true
	}
	tr := c.await(id, hooks{
		onUpdate: func(u api.SessionUpdate) {
			if u.Type == api.UpdateAgentMessageChunk && cancelID == "" {
				cancelID = c.send(api.MethodSessionCancel, api.SessionIDParams{SessionID: s.SessionID})
			}
		},
		onOther: onCancel,
	})
	if cancelled == nil { // the cancel reply may be queued after the prompt's
		if f := c.recv(); !onCancel(f) {
			t.Fatalf("expected the session/cancel response, got %s", f.Raw)
		}
	}
	var cr api.SessionCancelResult
	if cancelled.Error != nil || json.Unmarshal(cancelled.Result, &cr) != nil || cr != (api.SessionCancelResult{SessionID: s.SessionID, Cancelled: true}) {
		t.Fatalf("session/cancel answered %s", cancelled.Raw)
	}
	if tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	wantKinds(t, tr.events, "agent_message_chunk:Hel", "turn_complete:cancelled")
	if tr.result != (api.SessionPromptResult{SessionID: s.SessionID, StopReason: api.StopCancelled, Outcome: api.OutcomeCancelled, Content: "Hel"}) {
		t.Fatalf("prompt result = %+v", tr.result)
	}
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider request was not aborted by session/cancel")
	}
	if st := c.state(s.SessionID); st != "idle" {
		t.Fatalf("state after cancel = %q, want idle", st)
	}

	tr = c.prompt(s.SessionID, "second", hooks{})
	if tr.err != nil || tr.result.Outcome != api.OutcomeCompleted || tr.result.Content != "again" {
		t.Fatalf("prompt after cancel: %+v err %s", tr.result, tr.err)
	}
	wantKinds(t, tr.events, "agent_message_chunk:again", "context_usage:4/1", "turn_complete:completed")
	var got []string
	for _, m := range c.messages(s.SessionID).Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"user:hi", "assistant:Hel", "user:second", "assistant:again"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history = %q, want %q", got, want)
	}
	// No active turn any more.
	if _, werr := c.call(api.MethodSessionCancel, api.SessionIDParams{SessionID: s.SessionID}); werr == nil || werr.Code != api.CodeSessionNotFound {
		t.Fatalf("cancel with no turn: %s", werr)
	}
}

// A running turn plus QueueDepth (8) queued prompts fill the session: exactly one more prompt is refused with
// -32002, and every admitted prompt then runs to completion in turn.
func TestBusySession(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	srv := newLLM(t, blockAfterFirst("wait", release, nil), stream(ctSSE, openAIText(1, 1, "next")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", "")))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{})

	first := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "p0"})
	if f := c.recv(); f.Method != api.NotifySessionUpdate || !contains(f.Raw, `"text":"wait"`) {
		t.Fatalf("expected the first chunk, got %s", f.Raw)
	}
	ids := map[string]bool{first: true}
	for i := 1; i <= 9; i++ {
		ids[c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: fmt.Sprintf("p%d", i)})] = true
	}
	// The refusal comes while the first turn is still held: 1 running + 8 queued fill the session.
	f := c.recv()
	if f.Error == nil || f.Error.Code != api.CodeSessionBusy || !ids[idOf(f)] {
		t.Fatalf("expected one -32002, got %s", f.Raw)
	}
	delete(ids, idOf(f))
	once.Do(func() { close(release) })

	completes := 0
	for len(ids) > 0 {
		f := c.recv()
		switch {
		case f.Method == api.NotifySessionUpdate:
			var u api.SessionUpdate
			json.Unmarshal(f.Params, &u)
			if u.Type == api.UpdateTurnComplete {
				completes++
				if u.Outcome != api.OutcomeCompleted {
					t.Fatalf("turn_complete %s", f.Raw)
				}
			}
		case ids[idOf(f)]:
			var r api.SessionPromptResult
			if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.Outcome != api.OutcomeCompleted {
				t.Fatalf("admitted prompt failed: %s", f.Raw)
			}
			delete(ids, idOf(f))
		default:
			t.Fatalf("unexpected frame %s", f.Raw)
		}
	}
	if completes != 9 {
		t.Fatalf("%d turn_complete events, want 9", completes)
	}
	if _, bodies := srv.requests(); len(bodies) != 9 {
		t.Fatalf("provider saw %d requests, want 9", len(bodies))
	}
	if n := c.messages(s.SessionID).Total; n != 18 {
		t.Fatalf("history holds %d messages, want 18 (9 prompts and 9 answers)", n)
	}
}

// Unknown session, blank prompt and a session owned by another principal each get their code.
func TestPromptErrorCodes(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "supervised", "")))
	op := dialRC(t, d, "")
	s := op.newSession(api.SessionNewParams{})

	codeOf := func(c *rc, method string, params any) int {
		t.Helper()
		_, werr := c.call(method, params)
		if werr == nil {
			t.Fatalf("%s %v succeeded", method, params)
		}
		return werr.Code
	}
	// An unknown session: one failed turn_complete for it, then -32000.
	op.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: "no-such-session", Prompt: "hi"})
	var ev api.SessionUpdate
	if f := op.recv(); f.Method != api.NotifySessionUpdate || json.Unmarshal(f.Params, &ev) != nil ||
		ev.Type != api.UpdateTurnComplete || ev.Outcome != api.OutcomeFailed || ev.SessionID != "no-such-session" {
		t.Fatalf("unknown session: want a failed turn_complete first, got %s", f.Raw)
	}
	if f := op.recv(); f.Error == nil || f.Error.Code != api.CodeSessionNotFound {
		t.Errorf("unknown session: %s", f.Raw)
	}
	for _, blank := range []string{"", "   ", "\n\t "} {
		if code := codeOf(op, api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: blank}); code != api.CodeInvalidParams {
			t.Errorf("blank prompt %q: %d", blank, code)
		}
	}
	if n := op.messages(s.SessionID).Total; n != 0 {
		t.Fatalf("refused prompts left %d messages", n)
	}

	// The operator turns this uid into a plain user "other". Authority is resolved per request from the live
	// config, so from now on every connection of this uid, op included, acts as "other".
	op.mustCall(api.MethodConfigSetMany, map[string]any{"sets": []map[string]any{
		{"prop": "permission_profiles.chat.grants", "value": []string{"sessions:create", "sessions:execute", "sessions:read", "config:update:users.other.uid"}},
		{"prop": "users.other.uid", "value": os.Getuid()},
		{"prop": "users.other.permission_profiles", "value": []string{"chat"}},
	}}, nil)
	other := dialRC(t, d, "")
	for _, call := range []struct {
		method string
		params any
	}{
		{api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "hi"}},
		{api.MethodSessionCancel, api.SessionIDParams{SessionID: s.SessionID}},
		{api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: s.SessionID}},
		{api.MethodSessionApprove, api.SessionApproveParams{SessionID: s.SessionID, RequestID: "x", Decision: api.DecisionAllowOnce}},
		{api.MethodSessionNew, api.SessionNewParams{SessionID: s.SessionID}},
	} {
		if code := codeOf(other, call.method, call.params); code != api.CodeSessionNotOwned {
			t.Errorf("%s on a foreign session: %d, want %d", call.method, code, api.CodeSessionNotOwned)
		}
	}
	// Not a blanket refusal: "other" runs turns on its own session.
	mine := other.newSession(api.SessionNewParams{})
	if tr := other.prompt(mine.SessionID, "mine", hooks{}); tr.err != nil || tr.result.Content != "mine" {
		t.Fatalf("own session: %+v %s", tr.result, tr.err)
	}
	if code := codeOf(op, api.MethodSessionPrompt, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "hi"}); code != api.CodeSessionNotOwned {
		t.Fatalf("op now acts as other: prompt on the operator's session gave %d", code)
	}
	// Moving "other" to another uid makes this uid the operator again, and the owner runs on its session.
	other.mustCall(api.MethodConfigSet, map[string]any{"prop": "users.other.uid", "value": os.Getuid() + 100000}, nil)
	if tr := op.prompt(s.SessionID, "still mine", hooks{}); tr.err != nil || tr.result.Content != "still mine" {
		t.Fatalf("owner's session: %+v %s", tr.result, tr.err)
	}
	if n := op.messages(s.SessionID).Total; n != 2 {
		t.Fatalf("foreign calls changed the session: %d messages, want 2", n)
	}
}

// A client that starts a long turn and never reads its socket does not delay another client's turn: B's turn
// completes with every event while A's turn is still stuck behind A's full outbound queue.
func TestSlowClientIsolation(t *testing.T) {
	t.Parallel()
	const total = 64 << 20 // far more than the 16 MiB outbound queue and the socket buffers hold together
	var written atomic.Int64
	finished := make(chan struct{})
	aborted := make(chan struct{})
	chunk := openAIChunk(strings.Repeat("x", 4096))
	srv := newLLM(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctSSE)
		w.WriteHeader(http.StatusOK)
		for written.Load() < total {
			if _, err := w.Write(chunk); err != nil {
				close(aborted)
				return
			}
			w.(http.Flusher).Flush()
			written.Add(int64(len(chunk)))
		}
		close(finished)
	})
	extra := echoTOML + "\n[agents.b]\nmodel_provider = \"echo.default\"\nrisk_profile = \"full\"\n\n[rpc]\nwrite_timeout_ms = 120000\n"
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", extra)))

	a := dialRC(t, d, "")
	sa := a.newSession(api.SessionNewParams{AgentAlias: "a"})
	a.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sa.SessionID, Prompt: "flood me"})
	// A never reads again. The daemon writes A's events straight to A's socket while its queue is empty, so A's
	// turn backs up once the socket buffers are full (a few MiB on Linux); wait until it has streamed well past
	// the first chunk so B runs while A is backed up.
	waitFor(t, "A's stream to back up", func() bool { return written.Load() > 1<<20 })

	b := dialRC(t, d, "")
	sb := b.newSession(api.SessionNewParams{AgentAlias: "b"})
	// The echo provider counts every word it is sent: a one-word turn first measures the system prompt.
	first := b.prompt(sb.SessionID, "w", hooks{})
	usage := only(first.events, api.UpdateContextUsage)
	if first.err != nil || len(usage) != 1 || deref(usage[0].OutputTokens) != 1 {
		t.Fatalf("B's first turn: %+v %s", first.events, first.err)
	}
	system := deref(usage[0].InputTokens) - 1
	words := make([]string, 200)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	prompt := strings.Join(words, " ")
	tr := b.prompt(sb.SessionID, prompt, hooks{})
	if tr.err != nil || tr.result.Outcome != api.OutcomeCompleted || tr.result.Content != prompt {
		t.Fatalf("B's turn: %+v %s", tr.result, tr.err)
	}
	want := make([]string, 0, len(words)+2)
	for i, w := range words {
		if i < len(words)-1 {
			w += " "
		}
		want = append(want, "agent_message_chunk:"+w)
	}
	wantKinds(t, tr.events, append(want, fmt.Sprintf("context_usage:%d/200", system+2+200), "turn_complete:completed")...)

	// A's turn was in progress the whole time: its stream is still held and its session still runs.
	select {
	case <-finished:
		t.Fatal("A's flood was fully consumed although A never read: the daemon buffered without bound")
	default:
	}
	if st := b.state(sa.SessionID); st != "running" {
		t.Fatalf("A's session state = %q, want running", st)
	}
	// A leaves: its turn is cancelled and the provider request aborted.
	a.Conn().Close()
	select {
	case <-aborted:
	case <-time.After(15 * time.Second):
		t.Fatal("A's provider request was not aborted after A disconnected")
	}
	waitFor(t, "A's session to go idle", func() bool { return b.state(sa.SessionID) == "idle" })
}
