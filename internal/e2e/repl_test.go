package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chatTerm starts `zeroclaw agent --session sid` in a real terminal on the install of HOME h and waits for its
// banner. A shell runs it and prints its exit status (tmux can be slow to reap a pane's process); the shell's
// INT trap keeps it alive through the chat's Ctrl-C while the chat gets the default disposition.
func chatTerm(t *testing.T, h, sid string) *tmuxSession {
	t.Helper()
	argv := append([]string{"env", "-i"}, env(h, "TERM=xterm")...)
	script := fmt.Sprintf("trap true INT; %s agent --session %s; echo chat-exit=$?", binary, sid)
	term := newTmux(t, append(argv, "sh", "-c", script)...)
	term.waitScreen("session " + sid + " with agent default")
	return term
}

// keys types keys (tmux key names, or literal text with -l) into the chat.
func (s *tmuxSession) keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", "zc"}, keys...)...)
}

// typeLine types text literally, then Enter.
func (s *tmuxSession) typeLine(text string) {
	s.keys("-l", text)
	s.keys("Enter")
}

// waitLine waits until the screen has at least n rows that are exactly line, and returns the screen.
func (s *tmuxSession) waitLine(line string, n int) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.screen()
		if countRows(scr, line) >= n {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %d rows %q; screen:\n%s", n, line, trim(scr))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countRows(screen, line string) int {
	n := 0
	for _, row := range strings.Split(screen, "\n") {
		if strings.TrimRight(row, " ") == line {
			n++
		}
	}
	return n
}

// paneExit returns the exit status of the chat once it has ended, failing when it is still running after a
// bound.
func (s *tmuxSession) paneExit() int {
	s.t.Helper()
	scr := s.waitScreen("chat-exit=")
	for _, row := range strings.Split(scr, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(row), "chat-exit="); ok {
			var code int
			if _, err := fmt.Sscan(rest, &code); err == nil {
				return code
			}
		}
	}
	s.t.Fatalf("no exit status on the screen:\n%s", trim(scr))
	return -1
}

// alive fails the test when the chat has already ended.
func (s *tmuxSession) alive(what string) {
	s.t.Helper()
	if strings.Contains(s.screen(), "chat-exit=") {
		s.t.Fatalf("the chat ended after %s; screen:\n%s", what, trim(s.screen()))
	}
}

// The chat on a terminal edits lines: Up recalls the history (kept in the install, 0600), /help is answered
// by the chat itself, a """ block is one message, and a Ctrl-C at the idle prompt only warns while Ctrl-D quits.
func TestChatTerminalHistoryHelpAndQuit(t *testing.T) {
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	term := chatTerm(t, h, "repl-hist")

	term.typeLine("hello-one")
	term.waitLine("hello-one", 1)
	term.typeLine("/help")
	term.waitScreen("Commands (handled here, not sent to the model):")
	scr := term.waitScreen("/new, /new-session")
	if !strings.Contains(scr, "/model") || !strings.Contains(scr, "/session") {
		t.Fatalf("/help does not list the advertised commands; screen:\n%s", trim(scr))
	}
	// Up twice: past /help to hello-one, sent again as typed.
	term.keys("Up")
	term.keys("Up")
	term.keys("Enter")
	term.waitLine("hello-one", 2)
	// A """ block is one message.
	term.typeLine(`"""`)
	term.typeLine("line a")
	term.typeLine(`line b"""`)
	term.waitLine("line b", 1)
	term.typeLine("last-single")
	term.waitLine("last-single", 1)

	got := runOK(t, env(h), "", "sessions", "show", "repl-hist")
	want := "[0] user: hello-one\n[1] assistant: hello-one\n[2] user: hello-one\n[3] assistant: hello-one\n"
	if !strings.HasPrefix(got, want) || strings.Contains(got, "/help") || strings.Contains(got, `\x1b`) {
		t.Fatalf("the session holds:\n%s\nwant it to start with:\n%s(no /help, no escape sequence)", got, want)
	}
	if !strings.Contains(got, "[4] user: line a\n    line b\n[5] assistant") || !strings.Contains(got, "[6] user: last-single") {
		t.Fatalf("the \"\"\" block was not one message:\n%s", got)
	}
	histPath := filepath.Join(h, ".zeroclaw", "data", "state", "agent_history")
	hist, err := os.ReadFile(histPath)
	if err != nil || !strings.Contains(string(hist), "hello-one\n") {
		t.Fatalf("history file %s: %v\n%s", histPath, err, hist)
	}
	if m := mode(t, histPath); m != 0o600 {
		t.Errorf("history file mode %o, want 600", m)
	}

	term.keys("C-c")
	term.waitScreen("(Ctrl-C again or Ctrl-D to quit)")
	term.alive("one Ctrl-C at the idle prompt")
	term.keys("C-d")
	if code := term.paneExit(); code != 0 {
		t.Fatalf("Ctrl-D: exit %d; screen:\n%s", code, trim(term.screen()))
	}

	// The next chat recalls the last chat's lines.
	term = chatTerm(t, h, "repl-hist-2")
	term.keys("Up")
	term.keys("Enter")
	term.waitLine("last-single", 1)
	term.keys("C-d")
	term.paneExit()
}

// Ctrl-C during a turn cancels that turn, at an approval question (the line editor reads the key) as well as
// while a tool runs (the terminal sends SIGINT), and the chat goes on; two Ctrl-C at the idle prompt quit.
func TestChatTerminalCtrlCCancelsTurn(t *testing.T) {
	cfg := `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
auto_approve = ["shell"]
`
	h, _ := homeWithConfig(t, cfg)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	term := chatTerm(t, h, "repl-int")

	// At the approval question.
	term.typeLine(`/tool file_write {"path":"never.txt","content":"x"}`)
	term.waitScreen("Allow?")
	term.keys("C-c")
	term.waitScreen("(turn cancelled; Ctrl-C again or Ctrl-D to quit)")
	term.alive("Ctrl-C at an approval question")
	term.typeLine("after-question")
	term.waitLine("after-question", 1)

	// While the tool runs.
	term.typeLine(`/tool shell {"command":"sleep 30"}`)
	term.waitScreen(`[tool shell] {"command":"sleep 30"}`)
	term.keys("C-c")
	scr := term.waitScreen("cancelling the turn")
	term.waitLine("(turn cancelled; Ctrl-C again or Ctrl-D to quit)", 2)
	term.alive("Ctrl-C during a running tool")
	term.typeLine("after-tool")
	term.waitLine("after-tool", 1)
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "never.txt")); !os.IsNotExist(err) {
		t.Fatalf("the cancelled file_write ran (stat err %v); screen:\n%s", err, trim(scr))
	}

	term.keys("C-c")
	term.waitScreen("(Ctrl-C again or Ctrl-D to quit)")
	term.keys("C-c")
	if code := term.paneExit(); code != 0 {
		t.Fatalf("two Ctrl-C at the idle prompt: exit %d; screen:\n%s", code, trim(term.screen()))
	}
	got := runOK(t, env(h), "", "sessions", "show", "repl-int")
	if !strings.Contains(got, "user: after-question") || !strings.Contains(got, "user: after-tool") {
		t.Fatalf("the turns after the cancelled ones are missing:\n%s", got)
	}
}

// The daemon dying between two messages does not end the chat: it reconnects (starting an ephemeral daemon, as
// `zeroclaw agent` does when none runs), resumes the session, and sends the message.
func TestChatTerminalReconnectsAfterDaemonDies(t *testing.T) {
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	term := chatTerm(t, h, "repl-re")
	term.typeLine("before-crash")
	term.waitLine("before-crash", 1)
	term.waitLine(">", 1) // the prompt again: the turn has ended, so it is durable

	signal(t, d, syscall.SIGKILL)
	d.wait(t, 10*time.Second)
	term.typeLine("after-crash")
	term.waitScreen("reconnected: session repl-re resumed (2 messages)")
	term.waitLine("after-crash", 1)
	term.keys("C-d")
	if code := term.paneExit(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, trim(term.screen()))
	}
	got := runOK(t, env(h), "", "sessions", "show", "repl-re")
	if want := "[0] user: before-crash\n[1] assistant: before-crash\n[2] user: after-crash\n[3] assistant: after-crash\n"; got != want {
		t.Fatalf("session after the reconnect:\n%s\nwant:\n%s", got, want)
	}
}
