package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
)

// attackerEnv switches the test binary into the attacker of TestGatewayTakeoverAsAnotherUID: it holds the
// gateway's base URL, and the process runs as another uid.
const attackerEnv = "ZC_E2E_ATTACKER_BASE"

// attempt is one request the attacker made and what it got.
type attempt struct {
	Name   string `json:"name"`
	Status int    `json:"status"`
	Body   string `json:"body"`
}

// runAttacker plays issue 20's takeover chain as a local user who is not the daemon's: find a pairing code on
// any route that might show or mint one, else guess; pair with it; then raise the risk profile, add a shell cron
// job and run it, reload and shut the daemon down. Every request is printed as a JSON line. It returns the exit
// status.
func runAttacker(base string) int {
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	enc := json.NewEncoder(os.Stdout)
	token := ""
	do := func(name, method, path string, body any, hdr ...string) attempt {
		var rd io.Reader
		if body != nil {
			js, _ := json.Marshal(body)
			rd = bytes.NewReader(js)
		}
		req, err := http.NewRequest(method, base+path, rd)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		a := attempt{Name: name}
		res, err := c.Do(req)
		if err != nil {
			a.Body = "error: " + err.Error()
		} else {
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			a.Status, a.Body = res.StatusCode, string(raw)
		}
		_ = enc.Encode(a)
		return a
	}
	codeOf := func(a attempt) string {
		var b struct {
			Code string `json:"pairing_code"`
		}
		_ = json.Unmarshal([]byte(a.Body), &b)
		return b.Code
	}
	var codes []string
	for _, r := range [][3]string{{"pair code", "GET", "/pair/code"}, {"admin paircode", "GET", "/admin/paircode"},
		{"admin paircode new", "POST", "/admin/paircode/new"}} {
		if code := codeOf(do(r[0], r[1], r[2], nil)); code != "" {
			codes = append(codes, code)
		}
	}
	for i := range pairing.MaxFailedAttempts - 1 { // under the lockout, so the owner still pairs afterwards
		codes = append(codes, fmt.Sprintf("%06d", i*111111%1000000))
	}
	for _, code := range codes {
		a := do("pair", "POST", "/pair", nil, "X-Pairing-Code", code)
		var b struct {
			Token string `json:"token"`
		}
		if json.Unmarshal([]byte(a.Body), &b) == nil && b.Token != "" {
			token = b.Token
			break
		}
	}
	do("config set", "PUT", "/api/config/prop", map[string]any{"path": "risk_profiles.supervised.level", "value": "full"})
	job := do("cron add", "POST", "/api/cron", map[string]any{"agent": "default", "schedule": "0 0 1 1 *",
		"command": "touch " + os.Getenv("ZC_E2E_ATTACKER_MARK"), "name": "pwn"})
	var added struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(job.Body), &added) == nil && added.ID != "" {
		do("cron run", "POST", "/api/cron/"+added.ID+"/run", nil)
	}
	do("admin reload", "POST", "/admin/reload", nil)
	do("admin shutdown", "POST", "/admin/shutdown", nil)
	return 0
}

// Issue 20, critical 1, against the real binary: the daemon runs as root, and a second local uid (65534) plays
// the attacker through the gateway on loopback. It gets no pairing code (not shown, not minted), cannot guess
// one, and every state-changing route refuses it: config.toml is byte for byte the same, no cron job exists,
// no command ran, and the daemon still runs and answers.
func TestGatewayTakeoverAsAnotherUID(t *testing.T) {
	if os.Getuid() != 0 {
		// Not a skip: a second local uid needs root to become. CI runs as root.
		t.Fatal("this test runs the attacker as uid 65534 and needs root: run the suite as root, as .ci/run does")
	}
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[gateway]\nport = 0\n"
	cfgPath := filepath.Join(root, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, env(h), "daemon")
	sock := filepath.Join(root, "data", "daemon.sock")
	waitSocket(t, d, sock)
	banner := regexp.MustCompile(`Gateway pairing code: (\d{6})\n  pair with: curl -X POST -H 'X-Pairing-Code: \d{6}' (http://[0-9.:]+)/pair`)
	var m []string
	eventually(t, 10*time.Second, "the pairing banner", func() bool {
		m = banner.FindStringSubmatch(d.stderr.String())
		return m != nil
	})
	code, base := m[1], m[2]
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	pid := statusPID(t, sock)

	// The attacker: this test binary, copied where uid 65534 may run it, re-executed in attacker mode.
	dir, err := os.MkdirTemp("", "zc-attacker")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "attacker")
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "pwned") // the attacker's cron command would create it (as the daemon's uid)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = []string{attackerEnv + "=" + base, "ZC_E2E_ATTACKER_MARK=" + mark, "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("attacker: %v\n%s", err, errOut.String())
	}

	var attempts []attempt
	dec := json.NewDecoder(&out)
	for dec.More() {
		var a attempt
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("attacker output: %v\n%s", err, out.String())
		}
		attempts = append(attempts, a)
	}
	if len(attempts) < 8 { // three code routes, a pairing, config, cron, reload, shutdown
		t.Fatalf("the attacker made %d requests:\n%s\n%s", len(attempts), out.String(), errOut.String())
	}
	for _, a := range attempts {
		if a.Status != http.StatusUnauthorized && a.Status != http.StatusForbidden && a.Status != http.StatusTooManyRequests {
			t.Errorf("%s: status %d, want a refusal (401, 403 or 429); body %s", a.Name, a.Status, a.Body)
		}
		if strings.Contains(a.Body, code) || strings.Contains(a.Body, "zc_") {
			t.Errorf("%s: the answer carries the pairing code or a token: %s", a.Name, a.Body)
		}
	}

	// The daemon's state is unchanged.
	if after, _ := os.ReadFile(cfgPath); !bytes.Equal(after, before) {
		t.Errorf("config.toml changed:\n%s", after)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the attacker's cron command ran")
	}
	if d.exited() {
		t.Fatal("the daemon stopped")
	}
	if got := statusPID(t, sock); got != pid {
		t.Fatalf("status pid %d, was %d", got, pid)
	}
	c := dialRPC(t, sock)
	c.Initialize()
	res, ok := c.Call("cron/list", map[string]any{}, 2)["result"].(map[string]any)
	if jobs, _ := res["jobs"].([]any); !ok || len(jobs) != 0 {
		t.Errorf("cron/list after the attack: %v", res)
	}
	// The owner still pairs with the code the daemon printed: the attacker did not replace it.
	req, _ := http.NewRequest("POST", base+"/pair", nil)
	req.Header.Set("X-Pairing-Code", code)
	r, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("the owner's pairing with the banner code: %d", r.StatusCode)
	}
}
