//go:build linux

package mcp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// shimSupported: stdio servers are started under the keeper when Options.Shim names a binary.
const shimSupported = true

// runShim is the keeper of one stdio MCP server (the daemon starts it as `<zeroclaw> <command> <args...>` with
// ShimEnv=<daemon pid>, in a process group of its own and with Pdeathsig SIGTERM). It
//   - becomes a child subreaper, so a descendant whose parent dies (a daemonising grandchild, npx's node
//     after npx) is re-parented to it rather than to init;
//   - starts the server in a process group of its own, on the stdin/stdout/stderr it was given (it keeps no
//     copy of stdin or stdout, so the daemon sees the server's EOF), with Pdeathsig SIGKILL;
//   - when the server exits, or when the daemon dies (SIGTERM by Pdeathsig, even after kill -9 of the daemon)
//     or stops it (SIGTERM), kills the server's whole group, then every process re-parented to it, reaps them
//     all and exits with the server's status.
func runShim(daemonPID string, argv []string) int {
	// Pdeathsig follows the thread that forked: the server is started from this locked thread, which is
	// never unlocked, so it lives as long as the keeper.
	runtime.LockOSThread()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	if want, _ := strconv.Atoi(daemonPID); want > 0 && os.Getppid() != want {
		return 1 // the daemon died before the handler was installed: nothing was started, nothing to keep
	}
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "zeroclaw mcp keeper: no server command")
		return 127
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "zeroclaw mcp keeper: PR_SET_CHILD_SUBREAPER: %v\n", err)
		return 127
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = withoutShimEnv(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "zeroclaw mcp keeper: start %s: %v\n", argv[0], err)
		return 127
	}
	_ = os.Stdin.Close()
	_ = os.Stdout.Close()
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { // waits for the server without reaping it: its zombie keeps the group id reserved
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		close(exited)
	}()
	select {
	case <-exited:
	case <-sigs:
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	err := cmd.Wait()
	reapAdopted()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// reapAdopted kills and reaps every child the keeper has left (the descendants re-parented to it), until it
// has none: killing one may re-parent its own children here, so it loops.
func reapAdopted() {
	for {
		for _, p := range childPIDs(os.Getpid()) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.ECHILD):
			return
		case errors.Is(err, syscall.EINTR), err == nil && pid > 0:
		case err != nil:
			return
		default: // children left, none exited yet
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// childPIDs lists the live processes whose parent is ppid.
func childPIDs(ppid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	want := strconv.Itoa(ppid)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 > len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) > 1 && f[1] == want && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}
