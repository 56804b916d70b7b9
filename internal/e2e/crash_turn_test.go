package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// sseChunk is one OpenAI chat-completions stream chunk carrying text.
func sseChunk(text string) string {
	b, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": text}}}})
	return "data: " + string(b) + "\n\n"
}

// dialStream connects and initializes a client that reads streamed turns (Result skips the notifications).
func dialStream(t *testing.T, sock string) *ndjson.Client {
	t.Helper()
	c := ndjson.Dial(t, sock)
	c.Initialize()
	return c
}

// kill -9 in the middle of a streamed turn: after a restart the history holds every completed message and the
// user message of the interrupted turn, no partial assistant message, nothing twice; the session is idle and
// takes a new turn. Both session backends: sessions.db, and one JSONL file per session.
func TestKill9MidTurnKeepsHistory(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testKill9MidTurnKeepsHistory(t, "") })
	t.Run("jsonl", func(t *testing.T) { testKill9MidTurnKeepsHistory(t, "\n[channels]\nsession_backend = \"jsonl\"\n") })
}

func testKill9MidTurnKeepsHistory(t *testing.T, extraConfig string) {
	url, _ := stallingBackend(t)
	h, root := homeWithOpenAI(t, "fake", url)
	appendFile(t, filepath.Join(root, "config.toml"), extraConfig)
	d2, sock, turnID := killMidSecondTurn(t, h, root, "crash-1", nil)
	c2 := dialStream(t, sock)

	// Before anything revives the session, the stored state says the turn is over, and that it was cut.
	c2.Request("session/state", map[string]any{"session_id": "crash-1"}, 10)
	st := c2.Result(10)
	if st["state"] != "idle" || st["turn_id"] != nil || st["turn_started_at"] != nil {
		t.Errorf("session/state after the restart: %v, want idle without turn_id", st)
	}
	if st["last_turn_interrupted"] != true || st["interrupted_turn_id"] != turnID {
		t.Errorf("session/state after the restart: %v, want last_turn_interrupted and interrupted_turn_id %s", st, turnID)
	}
	c2.Request("session/list", map[string]any{}, 11)
	var listed map[string]any
	for _, it := range c2.Result(11)["sessions"].([]any) {
		if m := it.(map[string]any); m["session_id"] == "crash-1" {
			listed = m
		}
	}
	if listed == nil || listed["state"] != "idle" || listed["last_turn_interrupted"] != true ||
		listed["interrupted_turn_id"] != turnID {
		t.Errorf("session/list after the restart: %v, want crash-1 idle with the interruption noted", listed)
	}
	if !strings.Contains(d2.stderr.String(), "interrupted") {
		t.Errorf("the daemon did not log the interrupted turn:\n%s", d2.stderr.String())
	}

	c2.Request("session/new", map[string]any{"session_id": "crash-1"}, 2)
	if r := c2.Result(2); r["message_count"] != float64(3) {
		t.Fatalf("restored session: %v", r)
	}
	c2.Request("session/state", map[string]any{"session_id": "crash-1"}, 3)
	if r := c2.Result(3); r["state"] != "idle" {
		t.Fatalf("state after the crash: %v", r)
	}
	c2.Request("session/prompt", map[string]any{"session_id": "crash-1", "prompt": "third question"}, 4)
	if r := c2.Result(4); r["outcome"] != "completed" || r["content"] != "answer-3" {
		t.Fatalf("turn after the crash: %v", r)
	}
	// The next turn replaces the note.
	c2.Request("session/state", map[string]any{"session_id": "crash-1"}, 12)
	if r := c2.Result(12); r["state"] != "idle" || r["last_turn_interrupted"] != nil || r["interrupted_turn_id"] != nil {
		t.Errorf("session/state after a completed turn: %v, want idle without the interruption", r)
	}
	c2.Request("session/messages", map[string]any{"session_id": "crash-1"}, 5)
	msgs := c2.Result(5)["messages"].([]any)
	var got []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		got = append(got, mm["role"].(string)+":"+mm["content"].(string))
	}
	want := "user:first question|assistant:answer-1|user:second question|user:third question|assistant:answer-3"
	if strings.Join(got, "|") != want {
		t.Fatalf("history after kill -9:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
}

// killMidSecondTurn starts a daemon on the install at h/root, opens session id with newParams, completes a first
// turn (the backend answers "answer-1"), starts a second one and, once its answer is streaming, kills the daemon
// with SIGKILL. It restarts the daemon and returns it, the socket and the id of the turn that was cut.
func killMidSecondTurn(t *testing.T, h, root, id string, newParams map[string]any) (*proc, string, string) {
	t.Helper()
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	params := map[string]any{"session_id": id}
	for k, v := range newParams {
		params[k] = v
	}
	c.Request("session/new", params, 2)
	c.Result(2)
	c.Request("session/prompt", map[string]any{"session_id": id, "prompt": "first question"}, 3)
	if r := c.Result(3); r["content"] != "answer-1" {
		t.Fatalf("first turn: %v", r)
	}
	c.Request("session/prompt", map[string]any{"session_id": id, "prompt": "second question"}, 4)
	for { // wait until the daemon is streaming the second answer
		m := c.Next()
		if p, ok := m["params"].(map[string]any); ok && p["type"] == "agent_message_chunk" {
			break
		}
	}
	watcher := dialStream(t, sock)
	watcher.Request("session/state", map[string]any{"session_id": id}, 2)
	running := watcher.Result(2)
	turnID, _ := running["turn_id"].(string)
	if running["state"] != "running" || turnID == "" {
		t.Fatalf("state during the turn: %v", running)
	}
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)

	d2 := start(t, env(h), "daemon")
	waitSocket(t, d2, sock)
	return d2, sock, turnID
}

// stallingBackend is an OpenAI-compatible backend whose n-th request answers "answer-<n>", except the second,
// which sends one chunk and then stays silent until the client goes away (the turn a test kills). last returns
// the body of the latest request it received.
func stallingBackend(t *testing.T) (url string, last func() string) {
	t.Helper()
	var calls atomic.Int32
	var mu sync.Mutex
	var latest string
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		latest = string(body)
		mu.Unlock()
		n := calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		if n == 2 { // the turn that gets killed: one chunk, then silence
			fmt.Fprint(w, sseChunk("partial-answer-"))
			fl.Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		fmt.Fprint(w, sseChunk(fmt.Sprintf("answer-%d", n)))
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}))
	t.Cleanup(func() {
		close(release)
		backend.Close()
	})
	return backend.URL, func() string {
		mu.Lock()
		defer mu.Unlock()
		return latest
	}
}

// appendFile appends text to the file at p.
func appendFile(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
