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
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
)

const heartbeatConfig = `schema_version = 3

[providers.models.openai.fake]
uri = %q
model = "m"

[agents.default]
model_provider = "openai.fake"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true

[heartbeat]
enabled = %t
agent = "default"
interval_minutes = 1
two_phase = false
`

// kill -9 of the real binary in the middle of a heartbeat task: after the restart the interrupted slot is
// recorded as error (not left running, not run again), every slot has one outcome, and the next slots run and
// are ok only through heartbeat_complete. A reload that turns the heartbeat off stops it.
func TestHeartbeatKill9MidRun(t *testing.T) {
	t.Parallel()
	exe, err := crashBinary() // the test build scales a heartbeat minute (ZEROCLAW_TEST_HEARTBEAT_MINUTE)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hang := true
	started := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		mu.Lock()
		h := hang
		mu.Unlock()
		switch {
		case strings.Contains(string(body), `"role":"tool"`):
			fmt.Fprint(w, sseChunk("disk is fine"))
			fmt.Fprint(w, "data: [DONE]\n\n")
		case h:
			fmt.Fprint(w, sseChunk("checking-"))
			fl.Flush()
			select {
			case started <- struct{}{}:
			default:
			}
			<-r.Context().Done() // the run the test kills
			return
		default:
			fmt.Fprint(w, sseCall(heartbeat.CompleteTool, `{"summary":"disk checked"}`))
		}
		fl.Flush()
	}))
	t.Cleanup(backend.Close)

	h, root := homeWithConfig(t, fmt.Sprintf(heartbeatConfig, backend.URL, true))
	ws := filepath.Join(root, "agents", "default", "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, heartbeat.FileName), []byte("# tasks\n- check the disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := env(h, "ZEROCLAW_TEST_HEARTBEAT_MINUTE=1s")
	sock := filepath.Join(root, "data", "daemon.sock")
	d := startBinary(t, exe, environ, "daemon")
	waitSocket(t, d, sock)
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		t.Fatal("the heartbeat task never reached the model")
	}
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)
	mu.Lock()
	hang = false
	mu.Unlock()

	d = startBinary(t, exe, environ, "daemon")
	waitSocket(t, d, sock)
	var res api.HeartbeatRunsResult
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, errOut, code := run(t, environ, "", "heartbeat", "runs", "--json", "--limit", "100")
		if code != 0 {
			t.Fatalf("heartbeat runs: %d %s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("heartbeat runs --json: %v\n%s", err, out)
		}
		if ok := countStatus(res.Runs, api.HeartbeatOK); ok >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ok slot after the restart: %+v", res.Runs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var interrupted []api.HeartbeatRun
	perSlot := map[string]int{}
	for _, r := range res.Runs {
		perSlot[r.SlotAt]++
		if r.Output == heartbeat.Interrupted {
			interrupted = append(interrupted, r)
		}
		if r.Status == api.HeartbeatOK && (r.TaskText != "check the disk" || r.Output != "disk is fine") {
			t.Errorf("ok run: %+v", r)
		}
	}
	if len(interrupted) != 1 || interrupted[0].Status != api.HeartbeatError || interrupted[0].TaskText != "check the disk" {
		t.Fatalf("interrupted runs = %+v, want the one killed slot recorded as error", interrupted)
	}
	for slot, n := range perSlot {
		if n != 1 && slot != "" {
			t.Fatalf("slot %s has %d outcomes (a slot ran twice): %+v", slot, n, res.Runs)
		}
	}
	if n := countStatus(res.Runs, api.HeartbeatRunning); n > 1 {
		t.Fatalf("%d runs running at once", n)
	}
	if !res.Heartbeat.Enabled || res.Heartbeat.NextSlotAt == "" {
		t.Fatalf("state = %+v", res.Heartbeat)
	}

	// Reload turns it off: the state says so and no next slot is planned.
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(fmt.Sprintf(heartbeatConfig, backend.URL, false)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, environ, "", "config", "reload"); code != 0 {
		t.Fatalf("config reload: %d %s", code, errOut)
	}
	out, _, _ := run(t, environ, "", "heartbeat", "runs", "--json")
	var off api.HeartbeatRunsResult
	if err := json.Unmarshal([]byte(out), &off); err != nil || off.Heartbeat.Enabled || off.Heartbeat.NextSlotAt != "" {
		t.Fatalf("after the reload: %+v (%v)", off.Heartbeat, err)
	}
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 20*time.Second)
}

func countStatus(runs []api.HeartbeatRun, status string) int {
	n := 0
	for _, r := range runs {
		if r.Status == status {
			n++
		}
	}
	return n
}
