//go:build linux

package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func shellEnv(t *testing.T) (Env, sandbox) {
	t.Helper()
	s := newSandbox(t)
	return Env{Workspace: s.ws, Policy: Policy{Level: LevelFull, WorkspaceOnly: true}}, s
}

func shellCall(cmd string) Call { return call("shell", map[string]any{"command": cmd}) }

func TestShellOutputAndExitCode(t *testing.T) {
	t.Parallel()
	env, s := shellEnv(t)
	r := Execute(t.Context(), env, shellCall("echo out; echo err >&2; pwd"))
	want := "out\nerr\n" + canon(t, s.ws) + "\n[exit code: 0]"
	if r.IsError || r.Output != want {
		t.Fatalf("got %+v, want output %q", r, want)
	}
	r = Execute(t.Context(), env, shellCall("printf partial; exit 3"))
	if !r.IsError || r.Output != "partial\n[exit code: 3]" {
		t.Fatalf("non-zero exit: %+v", r)
	}
}

func TestShellEnvPassthroughOnly(t *testing.T) {
	env, _ := shellEnv(t)
	t.Setenv("ZC_TOOLS_DAEMON_SECRET", "leaked")
	env.Environ = []string{"ZC_PASSED=yes"}
	r := Execute(t.Context(), env, shellCall(`echo "passed=$ZC_PASSED secret=${ZC_TOOLS_DAEMON_SECRET:-unset}"; env | grep -c ZC_TOOLS_DAEMON_SECRET; command -v sh >/dev/null && echo path-ok`))
	if r.Output != "passed=yes secret=unset\n0\npath-ok\n[exit code: 0]" {
		t.Fatalf("environment leaked or missing: %q", r.Output)
	}
	env.Environ = []string{"PATH=/nonexistent"}
	r = Execute(t.Context(), env, shellCall(`echo "$PATH"`))
	if !strings.HasPrefix(r.Output, "/nonexistent\n") {
		t.Fatalf("configured PATH not used: %q", r.Output)
	}
}

func TestShellOutputCap(t *testing.T) {
	t.Parallel()
	env, _ := shellEnv(t)
	env.OutputCap = 100
	r := Execute(t.Context(), env, shellCall(`i=0; while [ $i -lt 1000 ]; do printf 0123456789; i=$((i+1)); done`))
	want := strings.Repeat("0123456789", 10) + "\n[output truncated: 9900 bytes omitted]\n[exit code: 0]"
	if r.Output != want {
		t.Fatalf("capped output = %q", r.Output)
	}
}

func TestShellTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	env, s := shellEnv(t)
	// Long enough for sh to start on a loaded machine; the assertions do not depend on how long it took.
	env.ShellTimeout = 3 * time.Second
	// A grandchild in the background, plus a foreground sleep: both must die.
	r := Execute(t.Context(), env, shellCall(`sh -c 'sleep 300' & echo $! > child.pid; echo started; sleep 300`))
	if !r.IsError || !strings.Contains(r.Output, "started\n") || !strings.Contains(r.Output, "timed out after 3s") {
		t.Fatalf("timeout result: %+v", r)
	}
	waitGone(t, readPid(t, filepath.Join(s.ws, "child.pid")))
}

func TestShellBackgroundChildDoesNotOutliveCommand(t *testing.T) {
	t.Parallel()
	env, s := shellEnv(t)
	r := Execute(t.Context(), env, shellCall(`sleep 300 & echo $! > bg.pid; echo done`))
	if r.IsError || r.Output != "done\n[exit code: 0]" {
		t.Fatalf("result: %+v", r)
	}
	waitGone(t, readPid(t, filepath.Join(s.ws, "bg.pid")))
}

func TestShellCancel(t *testing.T) {
	t.Parallel()
	env, s := shellEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	marker := filepath.Join(s.ws, "child.pid")
	done := make(chan Result, 1)
	go func() {
		done <- Execute(ctx, env, shellCall(`sleep 300 & echo $! > child.pid.tmp; mv child.pid.tmp child.pid; wait`))
	}()
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("finished before cancel: %+v", r)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	r := <-done
	if !r.IsError || !strings.Contains(r.Output, "[cancelled") {
		t.Fatalf("cancel result: %+v", r)
	}
	waitGone(t, readPid(t, marker))
}

func TestShellRefusedByExecute(t *testing.T) {
	t.Parallel()
	env, s := shellEnv(t)
	victim := filepath.Join(s.ws, "victim")
	mustWrite(t, victim, "x")
	r := Execute(t.Context(), env, shellCall("rm -rf / ; rm -f victim"))
	if !r.IsError || !strings.Contains(r.Output, "refused") || !strings.Contains(r.Output, "blocked command") {
		t.Fatalf("blocked command under full: %+v", r)
	}
	env.Policy = Policy{Level: LevelReadOnly}
	if r := Execute(t.Context(), env, shellCall("rm -f victim")); !r.IsError || !strings.Contains(r.Output, "readonly") {
		t.Fatalf("readonly shell: %+v", r)
	}
	if mustRead(t, victim) != "x" {
		t.Fatal("refused command ran")
	}
	env.Policy = Policy{Level: LevelFull}
	env.Workspace = filepath.Join(s.ws, "missing")
	if r := Execute(t.Context(), env, shellCall("true")); !r.IsError || !strings.Contains(r.Output, "not a directory") {
		t.Fatalf("missing workspace: %+v", r)
	}
}

func readPid(t *testing.T, p string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(mustRead(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone waits until pid no longer runs (gone, or a zombie awaiting its new parent's reap). The bound is a
// hang guard, not a timing assertion.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if !processRunning(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d survived", pid)
}

// processRunning reads /proc (Linux) and treats zombies as not running.
func processRunning(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}
