package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// spoofCommand is a tool call that, printed raw on a terminal, returns the cursor to the start of the line, moves
// it up six lines, clears the screen below and draws a harmless-looking tool line: the user would see "ls -la"
// and approve "echo PWNED > marker".
const spoofCommand = "echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] {\"command\":\"ls -la\"}..."

// sseToolCall is an OpenAI chat-completions stream that calls the shell tool with command.
func sseToolCall(command string) string {
	args, _ := json.Marshal(map[string]string{"command": command})
	head, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{
		"role": "assistant", "tool_calls": []map[string]any{{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": "shell", "arguments": string(args)}}}}}}})
	tail, _ := json.Marshal(map[string]any{"choices": []map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": "tool_calls"}}})
	return "data: " + string(head) + "\n\ndata: " + string(tail) + "\n\ndata: [DONE]\n\n"
}

// tmuxSession runs argv in a detached tmux session on a private server; the pane stays after argv exits.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, argv ...string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("this test drives a real terminal and needs tmux (CI installs it; locally: apt-get install tmux): %v", err)
	}
	dir, err := os.MkdirTemp("", "zct")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &tmuxSession{t: t, socket: filepath.Join(dir, "tmux.sock")}
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "zc", "-x", "160", "-y", "40", "sleep 3600")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	s.run("set-option", "-g", "remain-on-exit", "on")
	s.run(append([]string{"respawn-pane", "-k", "-t", "zc"}, argv...)...)
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TMUX=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// trim drops the blank rows below a captured screen's text.
func trim(screen string) string { return strings.TrimRight(screen, "\n ") }

// screen is what the terminal shows now.
func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "zc") }

// waitScreen waits until the screen contains want and returns it.
func (s *tmuxSession) waitScreen(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.screen()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q; screen:\n%s", want, trim(scr))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A model-supplied command full of terminal control sequences is shown escaped in the approval prompt of a
// real terminal: the user sees the command that would run, not the one the escape sequences paint.
func TestApprovalPromptShowsSpoofedCommandInTerminal(t *testing.T) {
	var calls atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			fmt.Fprint(w, sseToolCall(spoofCommand))
			return
		}
		// The answer tries to clear the screen too; on a terminal it is shown escaped.
		fmt.Fprint(w, sseChunk("\x1b[2J\x1b[Hturn-finished")+"data: [DONE]\n\n")
	}))
	defer backend.Close()

	h, _ := homeWithOpenAI(t, "fake", backend.URL)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	argv := append([]string{"env", "-i"}, env(h, "TERM=xterm")...)
	term := newTmux(t, append(argv, binary, "agent", "-m", "list the files")...)
	scr := term.waitScreen("Allow?")

	var prompt string
	for _, line := range strings.Split(scr, "\n") {
		if strings.Contains(line, "wants to run:") {
			prompt = line
		}
	}
	if !strings.Contains(prompt, "echo PWNED > marker #") || !strings.Contains(prompt, `\r\x1b[6A\x1b[J`) {
		t.Fatalf("the approval prompt does not show the real command with its control characters escaped; screen:\n%s", trim(scr))
	}
	for _, line := range strings.Split(scr, "\n") {
		if strings.HasPrefix(line, `[tool shell] {"command":"ls -la"}`) {
			t.Fatalf("the terminal shows the spoofed tool line as a line of its own; screen:\n%s", trim(scr))
		}
	}

	term.run("send-keys", "-t", "zc", "n", "Enter")
	scr = term.waitScreen("turn-finished")
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); !os.IsNotExist(err) {
		t.Fatalf("the rejected command ran (stat err %v); screen:\n%s", err, trim(scr))
	}
	if !strings.Contains(scr, "wants to run:") || !strings.Contains(scr, `\x1b[2J\x1b[Hturn-finished`) {
		t.Fatalf("the answer's escape sequences acted on the terminal; screen:\n%s", trim(scr))
	}
}
