package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// agentSock is the default endpoint of a temporary HOME.
func agentSock(h string) string { return filepath.Join(h, ".zeroclaw", "data", "daemon.sock") }

// agentWorkspace is the default agent's workspace, the cwd of its shell tool.
func agentWorkspace(h string) string {
	return filepath.Join(h, ".zeroclaw", "agents", "default", "workspace")
}

// waitSocketGone waits until nothing is left at the socket path (an ephemeral daemon removed it on exit).
func waitSocketGone(t *testing.T, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, err := os.Lstat(path)
		if os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists after %s (err %v): the ephemeral daemon did not exit", path, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runOK runs the binary and fails the test unless it exits 0.
func runOK(t *testing.T, environ []string, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, environ, stdin, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
	}
	return out
}

// With no daemon, `agent -m` spawns an ephemeral one, prints the echoed answer, and that daemon leaves by itself.
func TestAgentOneShotSpawnsEphemeralDaemon(t *testing.T) {
	t.Parallel()
	h := home(t)
	out, errOut, code := run(t, env(h), "", "agent", "-m", "hello")
	if code != 0 || out != "hello\n" {
		t.Fatalf("exit %d, stdout %q (want %q)\nstderr:\n%s", code, out, "hello\n", errOut)
	}
	sock := agentSock(h)
	waitSocketGone(t, sock, 15*time.Second)
	logb, err := os.ReadFile(filepath.Join(h, ".zeroclaw", "data", "daemon-ephemeral.log"))
	if err != nil {
		t.Fatalf("ephemeral daemon log: %v", err)
	}
	if !strings.Contains(string(logb), "ephemeral daemon exiting") {
		t.Errorf("the ephemeral daemon's log does not show it leaving on its own:\n%s", logb)
	}
	// History written through the spawned daemon is readable the same way (another ephemeral daemon).
	list := runOK(t, env(h), "", "sessions", "list")
	if n := strings.Count(list, "\n"); n != 2 || !strings.Contains(list, "default") {
		t.Fatalf("sessions list after one turn: want a header and one row, got:\n%s", list)
	}
	waitSocketGone(t, sock, 15*time.Second)
}

// Two one-shot turns on one --session are stored in order, and a daemon restart returns the same history.
func TestAgentSessionHistorySurvivesRestart(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := agentSock(h)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	if out := runOK(t, env(h), "", "agent", "--session", "e2e-hist", "-m", "first question"); out != "first question\n" {
		t.Fatalf("first turn printed %q", out)
	}
	if out := runOK(t, env(h), "", "agent", "--session", "e2e-hist", "-m", "second question"); out != "second question\n" {
		t.Fatalf("second turn printed %q", out)
	}
	want := "[0] user: first question\n[1] assistant: first question\n" +
		"[2] user: second question\n[3] assistant: second question\n"
	if got := runOK(t, env(h), "", "sessions", "show", "e2e-hist"); got != want {
		t.Fatalf("sessions show before restart:\n%s\nwant:\n%s", got, want)
	}
	if d.exited() {
		t.Fatal("the foreground daemon exited; the agent command should have used it")
	}
	// Each agent command releases its live session when it leaves, so one-shot runs never pile up against
	// the daemon's session limit; the history stays.
	if st := runOK(t, env(h), "", "status", "--json"); !strings.Contains(st, `"active_sessions": 0`) {
		t.Fatalf("live sessions left behind by agent commands:\n%s", st)
	}

	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	d2 := start(t, env(h), "daemon")
	waitSocket(t, d2, sock)
	if got := runOK(t, env(h), "", "sessions", "show", "e2e-hist"); got != want {
		t.Fatalf("sessions show after restart:\n%s\nwant:\n%s", got, want)
	}
	// --limit pages from the end and says older messages exist.
	out, errOut, code := run(t, env(h), "", "sessions", "show", "e2e-hist", "--limit", "2")
	if code != 0 || out != "[2] user: second question\n[3] assistant: second question\n" || !strings.Contains(errOut, "2 older") {
		t.Fatalf("show --limit 2: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A resumed session continues after the stored messages.
	runOK(t, env(h), "", "agent", "--session", "e2e-hist", "-m", "third")
	got := runOK(t, env(h), "", "sessions", "show", "e2e-hist")
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "[4] user: third\n[5] assistant: third\n") {
		t.Fatalf("after a third turn:\n%s", got)
	}
}

// Approvals are asked on the terminal: "y" runs the tool, "n" and EOF do not.
func TestAgentApprovalFromTerminal(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out, errOut, code := run(t, env(h), "y\n", "agent", "-m", `/tool shell {"command":"echo approved-run"}`)
	if code != 0 || !strings.Contains(out, "approved-run") || !strings.Contains(out, "tool shell returned") {
		t.Fatalf("approved: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Allow? [y]es / [n]o / [a]lways") {
		t.Errorf("no approval question on stderr:\n%s", errOut)
	}

	// Positive control: an approved touch creates its file in the workspace, so the refusals below are
	// checked at the right place.
	runOK(t, env(h), "y\n", "agent", "-m", `/tool shell {"command":"touch allowed-marker"}`)
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "allowed-marker")); err != nil {
		t.Fatalf("approved command did not run in the agent workspace: %v", err)
	}

	for name, stdin := range map[string]string{"no": "n\n", "eof": ""} {
		marker := "denied-" + name
		out, errOut, code := run(t, env(h), stdin, "agent", "-m", `/tool shell {"command":"touch `+marker+`"}`)
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(agentWorkspace(h), marker)); !os.IsNotExist(err) {
			t.Fatalf("%s: the rejected command ran (stat err %v)\nstderr:\n%s", name, err, errOut)
		}
		if !strings.Contains(out, "tool shell returned") {
			t.Errorf("%s: the model was not told the outcome:\n%s", name, out)
		}
	}
}

// ask_user questions are answered from stdin (a choice number picks that choice); EOF declines.
func TestAgentElicitationFromTerminal(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	ask := `/tool ask_user {"question":"Which color?","choices":["red","blue"]}`

	out, errOut, code := run(t, env(h), "2\n", "agent", "-m", ask)
	if code != 0 || !strings.Contains(out, "returned: blue") {
		t.Fatalf("answered: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Which color?") || !strings.Contains(errOut, "2) blue") {
		t.Errorf("question and choices not shown on stderr:\n%s", errOut)
	}
	out, errOut, code = run(t, env(h), "", "agent", "-m", ask)
	if code != 0 || strings.Contains(out, "returned: blue") || strings.Contains(out, "returned: red") {
		t.Fatalf("EOF should decline: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "declined") {
		t.Errorf("EOF answer not reported as declined:\n%s", errOut)
	}
}

// Interactive mode: one turn per stdin line until /exit, all on one session.
func TestAgentInteractive(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	out := runOK(t, env(h), "one\n\ntwo\n/exit\nnever sent\n", "agent", "--session", "e2e-inter")
	if out != "one\ntwo\n" {
		t.Fatalf("interactive stdout %q", out)
	}
	got := runOK(t, env(h), "", "sessions", "show", "e2e-inter")
	want := "[0] user: one\n[1] assistant: one\n[2] user: two\n[3] assistant: two\n"
	if got != want {
		t.Fatalf("interactive history:\n%s\nwant:\n%s", got, want)
	}
}

// sessions list shows a session and sessions delete removes it; an unknown agent is an error (exit 1).
func TestSessionsListAndDelete(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	runOK(t, env(h), "", "agent", "--session", "keep-me", "-m", "a")
	runOK(t, env(h), "", "agent", "--session", "drop-me", "-m", "b")

	list := runOK(t, env(h), "", "sessions", "list")
	if !strings.HasPrefix(list, "ID") || !strings.Contains(list, "keep-me") || !strings.Contains(list, "drop-me") {
		t.Fatalf("sessions list:\n%s", list)
	}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n")[1:] {
		// ID AGENT MESSAGES UPDATED (date time) STATE TITLE (the first message here)
		if f := strings.Fields(line); len(f) < 7 || f[1] != "default" || f[2] != "2" || f[5] != "idle" ||
			(f[0] == "keep-me") != (f[6] == "a") {
			t.Errorf("row %q: want agent default, 2 messages, idle, its first message as the title", line)
		}
	}
	if out := runOK(t, env(h), "", "sessions", "delete", "drop-me"); !strings.Contains(out, "drop-me") {
		t.Errorf("delete output %q", out)
	}
	list = runOK(t, env(h), "", "sessions", "list")
	if strings.Contains(list, "drop-me") || !strings.Contains(list, "keep-me") {
		t.Fatalf("after delete:\n%s", list)
	}

	_, errOut, code := run(t, env(h), "", "agent", "-a", "no-such-agent", "-m", "x")
	if code != 1 || !strings.Contains(errOut, "Error:") {
		t.Fatalf("unknown agent: exit %d, stderr:\n%s", code, errOut)
	}
	_, errOut, code = run(t, env(h), "", "sessions", "frobnicate")
	if code != 1 || !strings.Contains(errOut, "Try: zeroclaw sessions") {
		t.Fatalf("unknown subcommand: exit %d, stderr:\n%s", code, errOut)
	}
}

// The first SIGINT during a turn cancels the turn (exit 130) instead of killing the client mid-write.
func TestAgentInterruptCancelsTurn(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	cmd := exec.Command(binary, "agent", "--session", "e2e-int", "-m", `/tool shell {"command":"sleep 30"}`)
	cmd.Env = env(h)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinW.Close()
	cmd.Stdin = stdinR
	p := startCmd(t, cmd, "agent")
	stdinR.Close()
	// The approval question proves the turn is running; the signal lands while it waits for an answer.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.stderr.String(), "Allow?") {
		if time.Now().After(deadline) {
			t.Fatalf("no approval question; stderr:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 130 {
		t.Fatalf("exit code %d, want 130; stderr:\n%s", code, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "cancelling the turn") {
		t.Errorf("stderr does not say the turn is being cancelled:\n%s", p.stderr.String())
	}
	// The session is usable again right away.
	if out := runOK(t, env(h), "", "agent", "--session", "e2e-int", "-m", "after"); out != "after\n" {
		t.Fatalf("turn after the cancelled one printed %q", out)
	}
}

// When the spawned daemon cannot start, the agent command says so and points at the ephemeral log.
func TestAgentSpawnFailureNamesLog(t *testing.T) {
	t.Parallel()
	cfg := "schema_version = 3\n\n[rpc]\nmax_local_connections = \"many\"\n"
	h, root := homeWithConfig(t, cfg)
	out, errOut, code := run(t, env(h), "", "agent", "-m", "hello")
	logPath := filepath.Join(root, "data", "daemon-ephemeral.log")
	if code != 1 || out != "" || !strings.Contains(errOut, "exited before serving") || !strings.Contains(errOut, "Try: look at "+logPath) {
		t.Fatalf("exit %d\nstdout %q\nstderr:\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(b), "max_local_connections") {
		t.Fatalf("the log does not explain the failure (%v):\n%s", err, b)
	}
}

// --config-dir is handed to the spawned daemon: the session lands in that install, not in ~/.zeroclaw.
func TestAgentSpawnKeepsConfigDir(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := filepath.Join(h, "inst")
	if out := runOK(t, env(h), "", "agent", "--config-dir", dir, "--session", "cd-1", "-m", "in dir"); out != "in dir\n" {
		t.Fatalf("stdout %q", out)
	}
	waitSocketGone(t, filepath.Join(dir, "data", "daemon.sock"), 15*time.Second)
	if _, err := os.Stat(filepath.Join(dir, "data", "sessions", "sessions.db")); err != nil {
		t.Fatalf("no chat history in the --config-dir install: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h, ".zeroclaw")); !os.IsNotExist(err) {
		t.Fatalf("the default install was touched: %v", err)
	}
	got := runOK(t, env(h), "", "sessions", "show", "cd-1", "--config-dir", dir)
	if got != "[0] user: in dir\n[1] assistant: in dir\n" {
		t.Fatalf("sessions show:\n%s", got)
	}
}

// With two enabled agents and no -a, the command lists them and says how to choose; -a picks one.
func TestAgentTwoAgentsAsksForAlias(t *testing.T) {
	t.Parallel()
	cfg := string(config.DefaultTOML()) + "\n[agents.second]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n"
	h, _ := homeWithConfig(t, cfg)
	out, errOut, code := run(t, env(h), "", "agent", "-m", "hello")
	if code != 1 || out != "" || !strings.Contains(errOut, "2 agents are enabled: default, second") ||
		!strings.Contains(errOut, "Try: choose one with -a, e.g. zeroclaw agent -a default") || strings.Contains(errOut, "agent_alias") {
		t.Fatalf("exit %d\nstdout %q\nstderr:\n%s", code, out, errOut)
	}
	if out := runOK(t, env(h), "", "agent", "-a", "second", "-m", "hello"); out != "hello\n" {
		t.Fatalf("with -a: stdout %q", out)
	}
}
