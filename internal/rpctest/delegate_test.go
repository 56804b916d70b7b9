package rpctest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// scriptedLLM answers chat requests in order from a script whose steps may read state the test sets meanwhile,
// except requests of a background delegated turn (its task carries "[bg]"), which wait for release.
type scriptedLLM struct {
	*httptest.Server
	mu      sync.Mutex
	steps   []func() []byte
	bodies  [][]byte
	release chan struct{}
}

func newScriptedLLM(t *testing.T, steps ...func() []byte) *scriptedLLM {
	t.Helper()
	s := &scriptedLLM{steps: steps, release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the daemon gave the request up mid-body (a shutdown cancels a background turn's round)
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		var out []byte
		last := lastUserContent(t, body)
		bg := strings.Contains(last, "[bg]") || strings.Contains(last, "[bg-hang]")
		if !bg && len(s.steps) > 0 {
			out = s.steps[0]()
			s.steps = s.steps[1:]
		}
		s.mu.Unlock()
		if strings.Contains(last, "[bg-hang]") {
			w.Header().Set("Content-Type", ctSSE)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if bg {
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
			out = openAIText(3, 2, "background work done")
		}
		if out == nil {
			http.Error(w, "script exhausted", http.StatusInternalServerError)
			return
		}
		stream(ctSSE, out)(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedLLM) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

func fixed(b []byte) func() []byte { return func() []byte { return b } }

var taskIDLine = regexp.MustCompile(`task_id: ([0-9a-f-]{36})`)

// An agent whose profile allows delegation hands a task to an agent on its roster and gets its answer; in the
// background the task is a control-plane task whose result file says running, then completed, read through
// check_result and list_results. An agent off the roster is refused, and the delegated turn cannot delegate.
func TestDelegateToAnotherAgent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var taskID string
	checkResult := func() []byte {
		mu.Lock()
		defer mu.Unlock()
		return openAIToolCall("delegate", `{"action":"check_result","task_id":"`+taskID+`"}`)
	}
	llm := newScriptedLLM(t,
		fixed(openAIToolCall("delegate", `{"agent":"b","prompt":"summarise the notes","context":"notes are in notes/"}`)),
		fixed(openAIText(5, 2, "b's summary")), // b's delegated turn
		fixed(openAIText(5, 2, "b summarised")),
		fixed(openAIToolCall("delegate", `{"agent":"c","prompt":"anything"}`)),
		fixed(openAIText(5, 2, "done")),
		fixed(openAIToolCall("delegate", `{"agent":"b","prompt":"[bg] long job","background":true}`)),
		fixed(openAIText(5, 2, "started")),
		checkResult,
		fixed(openAIText(5, 2, "still running")),
		checkResult,
		fixed(openAIToolCall("delegate", `{"action":"list_results"}`)),
		fixed(openAIText(5, 2, "finished")),
		fixed(openAIToolCall("delegate", `{"agent":"b","prompt":"[bg-hang] never ends","background":true}`)),
		fixed(openAIText(5, 2, "started again")),
	)
	extra := `
[agents.a]
model_provider = "openai.fake"
risk_profile = "delegating"
delegates = ["b"]

[agents.b]
model_provider = "openai.fake"
risk_profile = "full"

[agents.c]
model_provider = "openai.fake"
risk_profile = "full"

[risk_profiles.delegating]
level = "full"
workspace_only = true
delegation_policy = { mode = "allow" }
`
	cfg := strings.Replace(agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "full", extra),
		"[agents.a]\nmodel_provider = \"openai.fake\"\nrisk_profile = \"full\"\n", "", 1)
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})

	res := toolResults(t, c.prompt(s.SessionID, "get b to summarise", hooks{}))
	if len(res) != 1 || res[0].IsError || output(t, res[0]) != "[Agent 'b' (openai/m)]\nb's summary" {
		t.Fatalf("synchronous delegate: %+v %q", res, output(t, res[0]))
	}
	bodies := llm.requests()
	if offered := toolNames(t, bodies[0]); !slices.Contains(offered, "delegate") {
		t.Fatalf("agent a was not offered delegate: %v", offered)
	}
	if len(bodies) != 3 {
		t.Fatalf("%d provider requests, want 3", len(bodies))
	}
	if got := lastUserContent(t, bodies[1]); got != "[Context]\nnotes are in notes/\n\n[Task]\nsummarise the notes" {
		t.Fatalf("the delegated prompt: %q", got)
	}
	if offered := toolNames(t, bodies[1]); slices.Contains(offered, "delegate") || !slices.Contains(offered, "shell") {
		t.Fatalf("the delegated turn was offered %v", offered)
	}

	res = toolResults(t, c.prompt(s.SessionID, "get c to do it", hooks{}))
	if len(res) != 1 || !res[0].IsError || output(t, res[0]) != "Unknown agent 'c'. Available agents: b" {
		t.Fatalf("delegate off the roster: %+v %q", res, output(t, res[0]))
	}

	res = toolResults(t, c.prompt(s.SessionID, "start the long job", hooks{}))
	m := taskIDLine.FindStringSubmatch(output(t, res[0]))
	if len(res) != 1 || res[0].IsError || m == nil {
		t.Fatalf("background delegate: %+v %q", res, output(t, res[0]))
	}
	mu.Lock()
	taskID = m[1]
	mu.Unlock()
	file := filepath.Join(d.ConfigDir, "agents", "a", "workspace", "delegate_results", taskID+".json")
	var onDisk map[string]any
	raw, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(raw, &onDisk) != nil || onDisk["status"] != "running" || onDisk["agent"] != "b" || onDisk["task_id"] != taskID {
		t.Fatalf("result file while running (%v): %s", err, raw)
	}
	res = toolResults(t, c.prompt(s.SessionID, "is it done?", hooks{}))
	if len(res) != 1 || res[0].IsError || !strings.Contains(output(t, res[0]), `"status": "running"`) {
		t.Fatalf("check_result while running: %+v %q", res, output(t, res[0]))
	}

	close(llm.release)
	waitFor(t, "the background task's result", func() bool {
		raw, _ = os.ReadFile(file)
		return strings.Contains(string(raw), `"status": "completed"`)
	})
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk["output"] != "background work done" || onDisk["finished_at"] == nil {
		t.Fatalf("result file when done (%v): %s", err, raw)
	}
	res = toolResults(t, c.prompt(s.SessionID, "and now?", hooks{}))
	if len(res) != 2 || res[0].IsError || !strings.Contains(output(t, res[0]), `"output": "background work done"`) {
		t.Fatalf("check_result when done: %+v", res)
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(output(t, res[1])), &listed); err != nil || len(listed) != 1 || listed[0]["task_id"] != taskID ||
		listed[0]["status"] != "completed" {
		t.Fatalf("list_results (%v): %s", err, output(t, res[1]))
	}

	// A task still running when the daemon stops is recorded as cancelled, in its file and its task.
	res = toolResults(t, c.prompt(s.SessionID, "one more", hooks{}))
	m = taskIDLine.FindStringSubmatch(output(t, res[0]))
	if m == nil {
		t.Fatalf("second background delegate: %q", output(t, res[0]))
	}
	waitFor(t, "the hanging task's request", func() bool {
		for _, b := range llm.requests() {
			if strings.Contains(string(b), "[bg-hang]") {
				return true
			}
		}
		return false
	})
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(filepath.Join(d.ConfigDir, "agents", "a", "workspace", "delegate_results", m[1]+".json"))
	if err != nil || json.Unmarshal(raw, &onDisk) != nil || onDisk["status"] != "cancelled" || onDisk["error"] == nil {
		t.Fatalf("result file of a task cut by the stop (%v): %s", err, raw)
	}
}

// Without delegation_policy.mode = "allow" the tool is not offered (upstream's default is forbidden).
func TestDelegateNotOfferedByDefault(t *testing.T) {
	t.Parallel()
	llm := newLLM(t, stream(ctSSE, openAIText(5, 2, "hi")))
	extra := "\n[agents.b]\nmodel_provider = \"openai.fake\"\nrisk_profile = \"full\"\n"
	cfg := strings.Replace(agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "full", extra),
		"risk_profile = \"full\"\n", "risk_profile = \"full\"\ndelegates = [\"b\"]\n", 1)
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := c.prompt(s.SessionID, "hello", hooks{}); tr.err != nil {
		t.Fatal(tr.err)
	}
	_, bodies := llm.requests()
	if offered := toolNames(t, bodies[0]); slices.Contains(offered, "delegate") || !slices.Contains(offered, "shell") {
		t.Fatalf("offered %v", offered)
	}
}
