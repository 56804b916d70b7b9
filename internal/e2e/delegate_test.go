package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// sseCall is an OpenAI chat-completions stream that calls tool name with args (a JSON object).
func sseCall(name, args string) string {
	head, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{
		"role": "assistant", "tool_calls": []map[string]any{{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": name, "arguments": args}}}}}}})
	tail, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": "tool_calls"}}})
	return "data: " + string(head) + "\n\ndata: " + string(tail) + "\n\ndata: [DONE]\n\n"
}

// toolOutputs sends session/prompt and reads until its response, returning the raw outputs of its tool results.
func toolOutputs(t *testing.T, c *ndjson.Client, sid, prompt string, id int) []string {
	t.Helper()
	c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": prompt}, id)
	var outs []string
	for {
		m := c.Next()
		if p, ok := m["params"].(map[string]any); ok && m["method"] == "session/update" && p["type"] == "tool_result" {
			s, _ := p["raw_output"].(string)
			outs = append(outs, s)
			continue
		}
		if m["method"] == nil && m["id"] == float64(id) {
			if m["error"] != nil {
				t.Fatalf("prompt %q: %v", prompt, m)
			}
			return outs
		}
	}
}

const delegateConfig = `schema_version = 3

[providers.models.openai.fake]
uri = %q
model = "m"

[agents.default]
model_provider = "openai.fake"
risk_profile = "delegating"
delegates = ["helper"]

[agents.helper]
model_provider = "openai.fake"
risk_profile = "delegating"

[risk_profiles.delegating]
level = "full"
workspace_only = true
delegation_policy = { mode = "allow" }
`

// kill -9 while a background delegated task runs: its result file still says running (nobody rewrote it), its
// control-plane task is lost after the restart, and check_result reads it as lost, not as running forever.
func TestDelegateKill9LeavesLostTask(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var taskID string
	calls := 0
	bgStarted := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		if strings.Contains(string(body), "[bg] the long task") && !strings.Contains(string(body), `"role":"tool"`) {
			fmt.Fprint(w, sseChunk("working-"))
			fl.Flush()
			select {
			case bgStarted <- struct{}{}:
			default:
			}
			<-r.Context().Done() // the task the test kills
			return
		}
		mu.Lock()
		calls++
		n, id := calls, taskID
		mu.Unlock()
		switch n {
		case 1:
			fmt.Fprint(w, sseCall("delegate", `{"agent":"helper","prompt":"[bg] the long task","background":true}`))
		case 3:
			fmt.Fprint(w, sseCall("delegate", `{"action":"check_result","task_id":"`+id+`"}`))
		default:
			fmt.Fprint(w, sseChunk(fmt.Sprintf("answer-%d", n)))
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
		fl.Flush()
	}))
	t.Cleanup(backend.Close)

	h, root := homeWithConfig(t, fmt.Sprintf(delegateConfig, backend.URL))
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "boss", "agent_alias": "default"}, 2)
	c.Result(2)
	outs := toolOutputs(t, c, "boss", "start the long task in the background", 3)
	m := regexp.MustCompile(`task_id: ([0-9a-f-]{36})`).FindStringSubmatch(strings.Join(outs, "\n"))
	if m == nil {
		t.Fatalf("background delegate: %q", outs)
	}
	mu.Lock()
	taskID = m[1]
	mu.Unlock()
	select {
	case <-bgStarted:
	case <-time.After(30 * time.Second):
		t.Fatal("the delegated turn never reached the model")
	}
	file := filepath.Join(root, "agents", "default", "workspace", "delegate_results", taskID+".json")
	readFile := func() map[string]any {
		raw, err := os.ReadFile(file)
		var r map[string]any
		if err != nil || json.Unmarshal(raw, &r) != nil {
			t.Fatalf("result file (%v): %s", err, raw)
		}
		return r
	}
	if r := readFile(); r["status"] != "running" || r["agent"] != "helper" {
		t.Fatalf("result file while running: %v", r)
	}
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	if r := readFile(); r["status"] != "running" || r["finished_at"] != nil {
		t.Fatalf("result file after the crash: %v (nothing should have rewritten it)", r)
	}
	c = dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "boss2", "agent_alias": "default"}, 2)
	c.Result(2)
	outs = toolOutputs(t, c, "boss2", "did the long task finish?", 3)
	if len(outs) != 1 || !strings.Contains(outs[0], `"status": "lost"`) || !strings.Contains(outs[0], taskID) {
		t.Fatalf("check_result after the crash: %q", outs)
	}
	// The daemon answered, so its start-up recovery is done: the task is lost in the control plane too.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(root, "data", "control_plane.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status, kind string
	if err := db.QueryRow("SELECT status, kind FROM tasks WHERE id = ?", taskID).Scan(&status, &kind); err != nil || status != "lost" || kind != "delegate" {
		t.Fatalf("control-plane task after the restart: %q %q %v", status, kind, err)
	}
}
