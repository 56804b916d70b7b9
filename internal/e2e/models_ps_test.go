package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// zeroclaw models asks each configured provider, through the daemon and with the key it holds, what it
// offers: an OpenAI-compatible /models and Ollama's /api/tags on loopback servers. An answer past the bound
// is refused (reported, the others still listed, exit 1).
func TestModelsCLI(t *testing.T) {
	t.Parallel()
	var sawKey atomic.Value
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		sawKey.Store(r.Header.Get("Authorization"))
		fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-local-b"},{"id":"gpt-local-a"},{"id":"gpt-local-a"}]}`)
	}))
	defer openai.Close()
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"models":[{"name":"llama3.2:3b","size":1}]}`)
	}))
	defer ollama.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[`)
		for i := 0; i < 200000; i++ { // ~5 MiB, past the 4 MiB bound
			fmt.Fprintf(w, `{"id":"model-%06d-xxxxxxxx"},`, i)
		}
		fmt.Fprint(w, `{"id":"last"}]}`)
	}))
	defer huge.Close()
	h, _ := homeWithConfig(t, fmt.Sprintf(`schema_version = 3

[providers.models.openai.local]
uri = "%s/v1"
api_key = "sk-models-test"
model = "gpt-local-a"

[providers.models.openai.huge]
uri = %q
model = "x"

[providers.models.ollama.box]
uri = %q
model = "llama3.2:3b"

[agents.default]
model_provider = "openai.local"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
`, openai.URL, huge.URL, ollama.URL))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out := runOK(t, env(h), "", "models", "openai.local")
	if !regexp.MustCompile(`(?s)openai\.local\s+gpt-local-a\n.*openai\.local\s+gpt-local-b\n`).MatchString(out) || strings.Count(out, "gpt-local-a") != 1 {
		t.Fatalf("models openai.local:\n%s", out)
	}
	if k, _ := sawKey.Load().(string); k != "Bearer sk-models-test" {
		t.Fatalf("the provider saw Authorization %q", k)
	}
	out, errOut, code := run(t, env(h), "", "models")
	if code != 1 || !strings.Contains(out, "ollama.box") || !strings.Contains(out, "llama3.2:3b") || !strings.Contains(out, "gpt-local-b") ||
		!strings.Contains(errOut, "openai.huge") || !strings.Contains(errOut, "larger than") || strings.Contains(out, "model-000001") {
		t.Fatalf("models: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "sk-models-test") {
		t.Fatal("the key was printed")
	}
	if _, errOut, code := run(t, env(h), "", "models", "openai.nobody"); code != 1 || !strings.Contains(errOut, "not configured") {
		t.Fatalf("unknown provider: exit %d %s", code, errOut)
	}
}

// zeroclaw ps shows a turn while it runs (its session, agent, model and elapsed time), against a provider
// that holds its answer until the test lets it go; once the turn ends, nothing runs.
func TestPsShowsRunningTurn(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var asked atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("thinking… "))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, sseChunk("done")+"data: [DONE]\n\n")
	}))
	defer backend.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	h, _ := homeWithOpenAI(t, "slow", backend.URL)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out := runOK(t, env(h), "", "ps", "--json")
	if !strings.Contains(out, `"turns": []`) {
		t.Fatalf("ps with nothing running:\n%s", out)
	}
	turn := start(t, env(h), "agent", "-m", "take your time", "--session", "ps-session-1")
	deadline := time.Now().Add(30 * time.Second)
	for asked.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the turn never reached the provider")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out = runOK(t, env(h, "COLUMNS=200"), "", "ps")
	if !regexp.MustCompile(`(?m)^SESSION\s+AGENT\s+MODEL\s+TURN\s+ELAPSED$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ps-session-1\s+default\s+openai\.slow/m\s+\S+\s+\d+(m\d+)?s$`).MatchString(out) {
		t.Fatalf("ps during the turn:\n%s", out)
	}
	close(release)
	if code := turn.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the turn exited %d", code)
	}
	if out, errOut, code := run(t, env(h), "", "ps"); code != 0 || out != "" || !strings.Contains(errOut, "no turn is running") {
		t.Fatalf("ps after the turn: exit %d %q %q", code, out, errOut)
	}
}

// A session whose model was switched for it alone (session/configure, as /model in the chat does) shows in ps
// with that model, marked as the session's own, while another session of the same agent shows the agent's.
// The provider saw the overridden model, so ps says what really runs.
func TestPsShowsSessionModelOverride(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	models := map[string]bool{}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
		mu.Lock()
		models[body.Model] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("thinking… "))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, sseChunk("done")+"data: [DONE]\n\n")
	}))
	defer backend.Close()
	defer close(release)
	h, _ := homeWithOpenAI(t, "slow", backend.URL)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	c := dialStream(t, agentSock(h))
	for i, id := range []string{"ps-own-model", "ps-agent-model"} {
		c.Request("session/new", map[string]any{"session_id": id}, 10+i)
		c.Result(10 + i)
	}
	c.Request("session/configure", map[string]any{"session_id": "ps-own-model", "overrides": map[string]any{"model": "m-big"}}, 20)
	if r := c.Result(20); fmt.Sprint(r["overrides"]) != "map[model:m-big]" {
		t.Fatalf("session/configure: %v", r)
	}
	for i, id := range []string{"ps-own-model", "ps-agent-model"} {
		c.Request("session/prompt", map[string]any{"session_id": id, "prompt": "take your time"}, 30+i)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(models)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the provider saw the models %v", models)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	if !models["m-big"] || !models["m"] {
		t.Fatalf("the provider saw the models %v, want m-big and m", models)
	}
	mu.Unlock()
	out := runOK(t, env(h, "COLUMNS=200"), "", "ps")
	if !regexp.MustCompile(`(?m)^ps-own-model\s+default\s+openai\.slow/m-big \(this session\)\s+\S+\s+\d+(m\d+)?s$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ps-agent-model\s+default\s+openai\.slow/m\s+\S+\s+\d+(m\d+)?s$`).MatchString(out) {
		t.Fatalf("ps:\n%s", out)
	}
	out = runOK(t, env(h), "", "ps", "--json")
	var got struct {
		Turns []psTurn `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Turns) != 2 {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	for _, tr := range got.Turns {
		want := psTurn{SessionID: tr.SessionID, Model: "openai.slow/m"}
		if tr.SessionID == "ps-own-model" {
			want.Model, want.ModelOverride = "openai.slow/m-big", true
		}
		if tr.Model != want.Model || tr.ModelOverride != want.ModelOverride {
			t.Fatalf("ps --json: %+v, want %+v", tr, want)
		}
	}
	out = runOK(t, env(h, "LANG=fr_FR.UTF-8", "COLUMNS=200"), "", "ps")
	if !strings.Contains(out, "openai.slow/m-big (cette session)") {
		t.Fatalf("ps in French:\n%s", out)
	}
}

type psTurn struct {
	SessionID     string `json:"session_id"`
	Model         string `json:"model"`
	ModelOverride bool   `json:"model_override"`
}
