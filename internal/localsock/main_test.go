package localsock

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The test binary doubles as a helper process: with envHelper set it takes an endpoint, prints
// "ready", and holds it until its stdin closes. This gives tests a real second process without flock(1).
const (
	envHelper     = "ZC_LOCALSOCK_TEST_HELPER" // "listen"
	envHelperPath = "ZC_LOCALSOCK_TEST_PATH"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		os.Exit(runHelper(mode, os.Getenv(envHelperPath)))
	}
	os.Exit(m.Run())
}

func runHelper(mode, path string) int {
	var release func() error
	switch mode {
	case "listen":
		l, err := Listen(path)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		release = l.Close
	default:
		fmt.Println("error unknown mode", mode)
		return 2
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // hold until the parent closes our stdin
	if err := release(); err != nil {
		return 1
	}
	return 0
}

// helper is a running helper process holding something.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startHelper re-executes the test binary in helper mode and waits until it holds path.
func startHelper(t *testing.T, mode, path string) *helper {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envHelperPath+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { h.stop(t) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("helper did not get ready: %q, %v", line, err)
	}
	return h
}

func (h *helper) pid() int { return h.cmd.Process.Pid }

// stop lets the helper release and exit, and waits for it. Safe to call twice.
func (h *helper) stop(t *testing.T) {
	t.Helper()
	if h.cmd.ProcessState != nil {
		return
	}
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Errorf("helper exit: %v", err)
	}
}

// kill ends the helper with SIGKILL, so nothing it holds is released by its own code.
func (h *helper) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h.cmd.Wait() // exit status is "killed"; the point is that it is gone
}

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file content %q: %v", b, err)
	}
	return pid
}
