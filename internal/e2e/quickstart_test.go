package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// handWritten is a config a user wrote by hand, comments and all: a quickstart must keep every byte of it.
const handWritten = `# My zeroclaw. Hand-written, please keep my notes.
schema_version = 3

# the offline provider, for tests
[providers.models.echo.default]
model = "echo"   # trailing note

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"
system_prompt = "You are terse."

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
# end of my notes
`

// addedOnly checks that after holds every line of before, in order, and that each line it adds is blank or
// inside one of the new tables: what a quickstart answered, nothing else.
func addedOnly(t *testing.T, before, after string, tables ...string) {
	t.Helper()
	old := strings.Split(strings.TrimSuffix(before, "\n"), "\n")
	i, inNew := 0, false
	for n, line := range strings.Split(strings.TrimSuffix(after, "\n"), "\n") {
		if i < len(old) && line == old[i] {
			i++
			if strings.HasPrefix(line, "[") {
				inNew = false
			}
			continue
		}
		if strings.HasPrefix(line, "[") {
			inNew = false
			for _, tb := range tables {
				inNew = inNew || line == "["+tb+"]"
			}
			if !inNew {
				t.Fatalf("line %d: the quickstart added table %s, not among %v:\n%s", n+1, line, tables, after)
			}
			continue
		}
		if line != "" && !inNew {
			t.Fatalf("line %d %q: the quickstart changed a line of the hand-written config:\n%s", n+1, line, after)
		}
	}
	if i != len(old) {
		t.Fatalf("the quickstart dropped the hand-written line %q:\n%s", old[i], after)
	}
}

// A new user answers the five questions in a real terminal against an OpenAI-compatible server on loopback;
// the provider is tested with one request, the change is shown (the key masked) and confirmed, config.toml
// gains only the answered tables (every hand-written byte kept, .bak holding the old file, the key enc2:),
// and the new agent answers a chat.
func TestQuickstartTerminalOpenAICompatible(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	var badAuth atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer sk-quick-test" {
			badAuth.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("OK from loopback")+"data: [DONE]\n\n")
	}))
	defer backend.Close()
	h, root := homeWithConfig(t, handWritten)
	cfgPath := filepath.Join(root, "config.toml")

	argv := append([]string{"env", "-i"}, env(h, "TERM=xterm", "QS_KEY=sk-quick-test")...)
	term := newTmux(t, append(argv, binary, "quickstart")...)
	answer := func(prompt, keys string) {
		t.Helper()
		term.waitScreen(prompt)
		term.run("send-keys", "-t", "zc", "-l", keys)
		term.run("send-keys", "-t", "zc", "Enter")
	}
	answer("Model provider", "openai")
	answer("Base URL", backend.URL+"/v1")
	answer("Model [gpt-4o-mini]", "m1")
	answer("Environment variable holding the API key", "QS_KEY")
	answer("Agent name [assistant]", "helper")
	answer("Risk preset", "balanced")
	answer("Pair a device", "n")
	answer("Install the daemon", "n")
	scr := term.waitScreen("Write these changes to")
	for _, want := range []string{`The provider answered: "OK from loopback"`, "+ [providers.models.openai.default]",
		"+ [agents.helper]", `+ api_key = "********"`, "+ quickstart_completed = true"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("the screen does not show %q before asking:\n%s", want, trim(scr))
		}
	}
	if strings.Contains(scr, "sk-quick-test") || strings.Contains(scr, "enc2:") {
		t.Fatalf("the diff shows the API key:\n%s", trim(scr))
	}
	if raw, _ := os.ReadFile(cfgPath); string(raw) != handWritten {
		t.Fatalf("config.toml changed before the user confirmed:\n%s", raw)
	}
	term.run("send-keys", "-t", "zc", "y", "Enter")
	scr = term.waitScreen("Quickstart complete")
	if !strings.Contains(scr, "zeroclaw agent --agent helper") {
		t.Fatalf("no next step shown:\n%s", trim(scr))
	}
	if n := requests.Load(); n != 1 || badAuth.Load() != 0 {
		t.Fatalf("the provider test made %d request(s), %d without the key; want exactly one with it", n, badAuth.Load())
	}

	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	after := string(raw)
	addedOnly(t, handWritten, after, "providers.models.openai.default", "agents.helper", "agents.helper.memory",
		"risk_profiles.balanced", "risk_profiles.balanced.delegation_policy", "onboard_state")
	if strings.Contains(after, "sk-quick-test") || !strings.Contains(after, `api_key = "enc2:`) {
		t.Fatalf("the API key is not stored encrypted:\n%s", after)
	}
	if bak, _ := os.ReadFile(cfgPath + ".bak"); string(bak) != handWritten {
		t.Fatalf("config.toml.bak is not the hand-written file:\n%s", bak)
	}
	cfg, _, err := config.Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.OnboardState.QuickstartCompleted || cfg.Agents["helper"].RiskProfile != "balanced" {
		t.Fatalf("onboard_state or the agent is wrong: %+v %+v", cfg.OnboardState, cfg.Agents["helper"])
	}

	// The new agent works: a one-shot chat through an ephemeral daemon reaches the loopback provider.
	out, errOut, code := run(t, env(h, "QS_KEY=unused"), "", "agent", "--agent", "helper", "-m", "hello")
	if code != 0 || !strings.Contains(out, "OK from loopback") {
		t.Fatalf("chat with the new agent: code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// --dry-run prints the change and writes nothing at all: not config.toml, not a .bak, not a secret key.
func TestQuickstartDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	h, root := homeWithConfig(t, handWritten)
	out, errOut, code := run(t, env(h), "", "quickstart", "--provider", "echo", "--agent", "helper", "--preset", "strict",
		"--yes", "--dry-run")
	if code != 0 || !strings.Contains(out, "+ [agents.helper]") || !strings.Contains(out, "+ [risk_profiles.locked_down]") ||
		!strings.Contains(out, "nothing was written") {
		t.Fatalf("code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "config.toml" {
		t.Fatalf("a dry run left files in the install: %v", entries)
	}
	if raw, _ := os.ReadFile(filepath.Join(root, "config.toml")); string(raw) != handWritten {
		t.Fatalf("a dry run changed config.toml:\n%s", raw)
	}

	// With no config at all, a dry run shows the default file's change and still creates nothing.
	empty := home(t)
	out, errOut, code = run(t, env(empty), "", "quickstart", "--provider", "echo", "--agent", "helper", "--yes", "--dry-run")
	if code != 0 || !strings.Contains(out, "+ [agents.helper]") {
		t.Fatalf("code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(empty, ".zeroclaw")); !os.IsNotExist(err) {
		t.Fatalf("a dry run without an install created one (stat: %v)", err)
	}
}

// A failed step leaves config.toml byte for byte: a provider that answers an error, one that answers an
// endless garbage body (read at most 1 MiB of it), and answers that cannot be applied (an agent name built to
// break out of its TOML table, an agent that exists).
func TestQuickstartFailedStepLeavesConfig(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/broken/") {
			http.Error(w, "no such model", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := []byte("data: " + strings.Repeat("x", 64<<10))
		for range 1024 { // 64 MiB offered, never a newline
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer backend.Close()
	h, root := homeWithConfig(t, handWritten)
	cfgPath := filepath.Join(root, "config.toml")
	unchanged := func(what string) {
		t.Helper()
		if raw, _ := os.ReadFile(cfgPath); string(raw) != handWritten {
			t.Fatalf("%s: config.toml changed:\n%s", what, raw)
		}
		if _, err := os.Stat(cfgPath + ".bak"); !os.IsNotExist(err) {
			t.Fatalf("%s: a .bak was written (stat: %v)", what, err)
		}
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"provider error", []string{"--provider", "openai", "--uri", backend.URL + "/broken/v1", "--model", "m"},
			[]string{"provider test failed", "HTTP 404", "nothing on disk was changed"}},
		{"garbage body", []string{"--provider", "openai", "--uri", backend.URL + "/v1", "--model", "m"},
			[]string{"provider test failed", "nothing on disk was changed"}},
		{"injected name", []string{"--provider", "echo", "--agent", "x\"]\n[agents.evil]\nrisk_profile=\"yolo"},
			[]string{"is not allowed", "Try: --agent my_agent"}},
		{"existing agent", []string{"--provider", "echo", "--agent", "default"},
			[]string{"agent `default` already exists", "nothing on disk was changed"}},
	}
	for _, tc := range cases {
		args := append([]string{"quickstart", "--yes", "--test-timeout", "20"}, tc.args...)
		out, errOut, code := run(t, env(h), "", args...)
		if code == 0 {
			t.Fatalf("%s: exit 0\nstdout: %s\nstderr: %s", tc.name, out, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out+errOut, w) {
				t.Fatalf("%s: output lacks %q\nstdout: %s\nstderr: %s", tc.name, w, out, errOut)
			}
		}
		unchanged(tc.name)
	}
	if n := sent.Load(); n >= 32<<20 {
		t.Fatalf("the provider test let the server send %d bytes; it must stop reading at its bound", n)
	}
}

// kill -9 of the real binary while it writes leaves config.toml as it was or as the quickstart makes it, never
// a mix, and the install is usable by the next run.
func TestQuickstartKillDuringWrite(t *testing.T) {
	t.Parallel()
	big := handWritten + strings.Repeat("# padding so the write takes a while\n", 20000)
	h, root := homeWithConfig(t, big)
	cfgPath := filepath.Join(root, "config.toml")
	args := []string{"quickstart", "--yes", "--provider", "echo", "--agent", "helper", "--no-test"}

	// The result of a run that is not interrupted.
	if out, errOut, code := run(t, env(h), "", args...); code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	want, _ := os.ReadFile(cfgPath)
	took := 0 * time.Millisecond
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	seen := map[string]int{}
	for k := range 10 {
		if err := os.WriteFile(cfgPath, []byte(big), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, args...)
		cmd.Env = env(h)
		begin := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			_ = cmd.Wait() // measures one whole run: the kills below land inside that span
			took = time.Since(begin)
			continue
		}
		time.Sleep(time.Duration(rng.Int64N(int64(took) + 1)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		raw, _ := os.ReadFile(cfgPath)
		switch string(raw) {
		case big:
			seen["old"]++
		case string(want):
			seen["new"]++
		default:
			t.Fatalf("kill %d: config.toml is neither the old nor the new file (%d bytes)", k, len(raw))
		}
		if _, _, err := config.Load(cfgPath, nil); err != nil {
			t.Fatalf("kill %d: config.toml does not load: %v", k, err)
		}
	}
	t.Logf("after the kills: %v", seen)
	// The next run cleans up what a kill left and completes.
	if err := os.WriteFile(cfgPath, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run(t, env(h), "", args...); code != 0 {
		t.Fatalf("the run after the kills: code %d\n%s\n%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != string(want) {
		t.Fatal("the run after the kills wrote a different file")
	}
	if temps, _ := filepath.Glob(filepath.Join(root, ".config.toml.tmp-*")); len(temps) != 0 {
		t.Fatalf("temp files left behind: %v", temps)
	}
}

// With a daemon running, the quickstart applies through it: the new agent is live at once (agents/list on the
// daemon's socket lists it) without a reload, and the file gained it.
func TestQuickstartThroughRunningDaemon(t *testing.T) {
	t.Parallel()
	h, root := homeWithConfig(t, handWritten)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	units := filepath.Join(h, "units")
	out, errOut, code := run(t, env(h, "ZEROCLAW_SERVICE_DIR="+units), "", "quickstart", "--provider", "echo",
		"--agent", "live_one", "--preset", "open", "--pair", "--install-service", "--yes")
	if code != 0 || !strings.Contains(out, "applied through it") || !strings.Contains(errOut, "one-time code") {
		t.Fatalf("code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if unit, err := os.ReadFile(filepath.Join(units, "zeroclaw.service")); err != nil || !strings.Contains(string(unit), "daemon") {
		t.Fatalf("--install-service wrote no unit: %v\n%s", err, unit)
	}
	c := dialRPC(t, agentSock(h))
	c.Initialize()
	r := c.Call("agents/list", map[string]any{}, 2)
	res, _ := r["result"].(map[string]any)
	found := false
	for _, a := range res["agents"].([]any) {
		found = found || a.(map[string]any)["alias"] == "live_one"
	}
	if !found {
		t.Fatalf("the running daemon does not list the new agent: %v", r)
	}
	raw, _ := os.ReadFile(filepath.Join(root, "config.toml"))
	addedOnly(t, handWritten, string(raw), "agents.live_one", "agents.live_one.memory", "risk_profiles.yolo",
		"risk_profiles.yolo.delegation_policy", "onboard_state")
}
