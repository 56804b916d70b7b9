// Package helperproc lets a package's test binary double as a helper process: started again with an env var
// naming a mode, it takes what that mode holds (a lock, a listening socket), prints "ready", and keeps it until
// its parent closes its stdin. Tests get a real second process holding the resource, without flock(1) or a
// second binary. It is for tests only; install's and localsock's tests share it.
package helperproc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Hold takes what a mode holds at path and returns how to give it back.
type Hold func(path string) (release func() error, err error)

// Main is a test package's TestMain: with env set to one of holds' modes the binary is the helper (it never
// returns); otherwise it runs the tests.
func Main(m *testing.M, env string, holds map[string]Hold) {
	if mode := os.Getenv(env); mode != "" {
		os.Exit(run(holds[mode], mode, os.Getenv(env+"_PATH")))
	}
	os.Exit(m.Run())
}

func run(hold Hold, mode, path string) int {
	if hold == nil {
		fmt.Println("error unknown mode", mode)
		return 2
	}
	release, err := hold(path)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // hold until the parent closes our stdin
	if err := release(); err != nil {
		return 1
	}
	return 0
}

// Process is a running helper holding something.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// Start re-executes the test binary as the helper of mode (env as given to Main) and waits until it holds path.
// The test's cleanup stops it.
func Start(t *testing.T, env, mode, path string) *Process {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+mode, env+"_PATH="+path)
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
	p := &Process{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { p.Stop(t) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("helper did not get ready: %q, %v", line, err)
	}
	return p
}

// PID is the helper's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stop lets the helper release and exit, and waits for it. Safe to call twice.
func (p *Process) Stop(t *testing.T) {
	t.Helper()
	if p.cmd.ProcessState != nil {
		return
	}
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("helper exit: %v", err)
	}
}

// Kill ends the helper with SIGKILL, so nothing it holds is released by its own code.
func (p *Process) Kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait() // exit status is "killed"; the point is that it is gone
}
