package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The real binary: `zeroclaw doctor` asks the running daemon (doctor/run), and inspects the install itself
// when none runs; a wrong mode and a stale socket are found, each with its fix, and make the exit code 1.
func TestDoctorCLI(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out := runOK(t, env(h), "", "doctor", "--offline")
	if !strings.Contains(out, "checked by the running daemon") || !strings.Contains(out, "0 warnings, 0 errors") ||
		!strings.Contains(out, "sessions.db: integrity ok") {
		t.Fatalf("doctor on a sound install:\n%s", out)
	}
	js := runOK(t, env(h), "", "doctor", "--offline", "--json")
	var res struct {
		Results []map[string]any `json:"results"`
		Summary map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil || res.Summary["ok"] == 0 || res.Summary["errors"] != 0 {
		t.Fatalf("doctor --json: %v\n%s", err, js)
	}

	cfg := filepath.Join(root, "config.toml")
	if err := os.Chmod(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, env(h), "", "doctor", "--offline")
	if code != 1 || !strings.Contains(out, "ERROR [files] "+cfg+" has mode 0644") || !strings.Contains(out, "fix: chmod 600 "+cfg) {
		t.Fatalf("doctor with a readable config: exit %d\n%s", code, out)
	}
	if err := os.Chmod(cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	// kill -9 leaves the socket behind: the doctor runs in its own process and says so.
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)
	out, errOut, code := run(t, env(h), "", "doctor", "--offline")
	if code != 1 || !strings.Contains(out, "checked by this process (no daemon running)") ||
		!strings.Contains(out, "WARN  [daemon] no daemon runs but its socket") || !strings.Contains(errOut, "Try: apply the fixes above") {
		t.Fatalf("doctor after kill -9: exit %d\n%s\n%s", code, out, errOut)
	}
}
