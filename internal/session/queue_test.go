package session

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// sseChunk is one OpenAI chat-completions stream chunk carrying delta content.
func sseChunk(w http.ResponseWriter, content string) {
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"fake-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", content)
	w.(http.Flusher).Flush()
}

func sseFinish(w http.ResponseWriter) {
	fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"fake-model\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"fake-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
}

// useOpenAI points the default agent at an OpenAI-compatible server.
func useOpenAI(url string) func(*config.Config) {
	return func(c *config.Config) {
		c.Providers.Models[config.FamilyOpenAI] = map[string]config.ProviderConfig{"fake": {URI: url, APIKey: "sk-test-secret-key", Model: "fake-model"}}
		a := c.Agents["default"]
		a.ModelProvider = "openai.fake"
		c.Agents["default"] = a
	}
}

// waitFor polls cond; it only guards against a hang, it asserts nothing about time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestCancelMidStreamAbortsRequestAndSessionStaysUsable(t *testing.T) {
	var requests atomic.Int32
	aborted := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if requests.Add(1) == 1 {
			sseChunk(w, "Hel")
			<-r.Context().Done() // stream stalls until the client goes away
			close(aborted)
			return
		}
		sseChunk(w, "o")
		sseChunk(w, "k")
		sseFinish(w)
	}))
	defer srv.Close()
	e := newEnv(t, useOpenAI(srv.URL))
	s := e.open(admin, api.SessionNewParams{})

	if _, err := e.m.Cancel(admin, s.SessionID); !errors.Is(err, ErrNoActiveTurn) || err.Error() != "No active turn for this session" {
		t.Fatalf("Cancel without a turn = %v", err)
	}
	sk := &sink{}
	sk.onUpdate = func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateAgentMessageChunk {
			st, err := e.m.State(t.Context(), admin, s.SessionID)
			if err != nil || st.State != "running" || st.TurnID == "" || st.TurnStartedAt == "" {
				t.Errorf("state during the turn = %+v, %v", st, err)
			}
			if res, err := e.m.Cancel(admin, s.SessionID); err != nil || !res.Cancelled {
				t.Errorf("Cancel = %+v, %v", res, err)
			}
		}
	}
	res := e.prompt(s.SessionID, "hi", sk)
	if res.Outcome != api.OutcomeCancelled || res.Content != "Hel" {
		t.Fatalf("result %+v", res)
	}
	select {
	case <-aborted:
	case <-time.After(20 * time.Second):
		t.Fatal("the provider request was not aborted")
	}
	st, err := e.m.State(t.Context(), admin, s.SessionID)
	if err != nil || st.State != "idle" {
		t.Fatalf("state after cancel = %+v, %v", st, err)
	}

	sk2 := &sink{}
	res = e.prompt(s.SessionID, "again", sk2)
	if res.Outcome != api.OutcomeCompleted || res.Content != "ok" {
		t.Fatalf("second turn %+v", res)
	}
	msgs, err := e.m.Messages(t.Context(), admin, api.SessionMessagesParams{SessionID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs.Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	if strings.Join(got, "|") != "user:hi|assistant:Hel|user:again|assistant:ok" {
		t.Fatalf("history %v", got)
	}
	if costs := e.costLines(); len(costs) != 1 || costs[0].Usage.Model != "fake-model" || costs[0].Usage.TotalTokens != 7 {
		t.Fatalf("costs %+v (only the completed request reported usage)", costs)
	}
}

func TestProviderFailureIsAFailedOutcomeWithoutSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"bad key sk-test-secret-key"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	e := newEnv(t, useOpenAI(srv.URL))
	s := e.open(admin, api.SessionNewParams{})
	sk := &sink{}
	res := e.prompt(s.SessionID, "hi", sk)
	done := sk.of(api.UpdateTurnComplete)[0]
	if res.Outcome != api.OutcomeFailed || done.Error == "" || strings.Contains(done.Error, "sk-test-secret-key") || !strings.Contains(done.Error, "openai.fake") {
		t.Fatalf("result %+v, turn_complete error %q", res, done.Error)
	}
	if st, _ := e.m.State(t.Context(), admin, s.SessionID); st.State != "error" {
		t.Fatalf("state = %+v", st)
	}
}

func TestQueueDepthAndBusy(t *testing.T) {
	release := make(chan struct{})
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseChunk(w, "done")
		sseFinish(w)
	}))
	defer srv.Close()
	e := newEnv(t, useOpenAI(srv.URL))
	s := e.open(admin, api.SessionNewParams{})
	live, err := e.m.live(s.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	queued := func() int {
		live.mu.Lock()
		defer live.mu.Unlock()
		return live.queued
	}

	var wg sync.WaitGroup
	results := make(chan api.SessionPromptResult, 1+QueueDepth)
	start := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: fmt.Sprint("p", i)}, &sink{})
			if err != nil {
				t.Errorf("prompt %d: %v", i, err)
			}
			results <- res
		}()
	}
	start(0)
	waitFor(t, "the first turn to reach the provider", func() bool { return requests.Load() == 1 })
	for i := 1; i <= QueueDepth; i++ {
		start(i)
	}
	waitFor(t, "8 prompts queued behind the running one", func() bool { return queued() == 1+QueueDepth })
	if _, err := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "one too many"}, &sink{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("9th waiting prompt = %v, want ErrBusy", err)
	}
	if requests.Load() != 1 {
		t.Fatalf("turns of one session must be serialized: %d requests in flight", requests.Load())
	}
	close(release)
	wg.Wait()
	close(results)
	n := 0
	for res := range results {
		if res.Outcome != api.OutcomeCompleted {
			t.Fatalf("queued turn %+v", res)
		}
		n++
	}
	if n != 1+QueueDepth || requests.Load() != int32(1+QueueDepth) {
		t.Fatalf("%d results, %d requests", n, requests.Load())
	}
	msgs, err := e.m.Messages(t.Context(), admin, api.SessionMessagesParams{SessionID: s.SessionID})
	if err != nil || msgs.Total != 2*(1+QueueDepth) {
		t.Fatalf("stored %d messages, %v", msgs.Total, err)
	}
	for i := 0; i < len(msgs.Messages); i += 2 {
		if msgs.Messages[i].Role != "user" || msgs.Messages[i+1].Role != "assistant" {
			t.Fatalf("turns interleaved at %d: %+v", i, msgs.Messages[i:i+2])
		}
	}
}

func TestQueuedPromptGivesUpAfterLockTimeoutAndDisconnectCancelsQueued(t *testing.T) {
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	e := newEnv(t, nil, func(o *Options) { o.LockTimeout = 50 * time.Second; o.Clock = clock })
	s := e.open(admin, api.SessionNewParams{})
	asked := make(chan string, 1)
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateApprovalRequest {
			asked <- ev.RequestID
		}
	}}
	first := make(chan api.SessionPromptResult, 1)
	go func() {
		res, err := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: `/tool file_write {"path":"a","content":"b"}`}, sk)
		if err != nil {
			t.Errorf("first prompt: %v", err)
		}
		first <- res
	}()
	reqID := <-asked // the first turn now holds the session, waiting for approval

	late := make(chan error, 1)
	go func() {
		_, err := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "late"}, &sink{})
		late <- err
	}()
	if !clock.WaitTimer(50*time.Second, 20*time.Second) {
		t.Fatal("the late prompt never started waiting for the lock")
	}
	clock.Advance(50*time.Second - time.Nanosecond)
	select {
	case err := <-late:
		t.Fatalf("the late prompt gave up before the lock timeout: %v", err)
	default:
	}
	clock.Advance(time.Nanosecond)
	if err := <-late; !errors.Is(err, ErrBusy) {
		t.Fatalf("prompt behind a stuck turn = %v, want ErrBusy after the lock timeout", err)
	}

	// A queued prompt of another connection is cancelled when that connection goes away.
	other := Owner{Principal: admin.Principal, Admin: true, ConnID: 99}
	queuedErr := make(chan error, 1)
	e.m.o.LockTimeout = time.Hour // only the disconnect may end the wait now
	go func() {
		_, err := e.m.Prompt(t.Context(), other, api.SessionPromptParams{SessionID: s.SessionID, Prompt: "queued"}, &sink{})
		queuedErr <- err
	}()
	live, _ := e.m.live(s.SessionID)
	waitFor(t, "the second prompt to queue", func() bool {
		live.mu.Lock()
		defer live.mu.Unlock()
		return live.queued == 2
	})
	e.m.Disconnected(other.ConnID)
	if err := <-queuedErr; err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("queued prompt after its connection left = %v", err)
	}
	if _, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: s.SessionID, RequestID: reqID, Decision: api.DecisionAllowOnce}); err != nil {
		t.Fatalf("the first connection's approval must survive another's disconnect: %v", err)
	}
	if res := <-first; res.Outcome != api.OutcomeCompleted {
		t.Fatalf("first turn %+v", res)
	}
}
