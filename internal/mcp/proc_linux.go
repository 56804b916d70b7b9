//go:build linux

package mcp

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The kernel sends Pdeathsig when the thread that forked the child exits, not the process; Go may end an OS
// thread (one a goroutine locked and left). So every child is started from one locked thread that lives as
// long as the process.
var (
	spawnOnce sync.Once
	spawnReq  chan spawnCall
)

type spawnCall struct {
	cmd  *exec.Cmd
	done chan error
}

// startCmd starts cmd from the spawner thread.
func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReq = make(chan spawnCall)
		go func() {
			// The thread belongs to the process, not to the daemon (or test) whose first child started it:
			// it drops the labels it inherited, so leak checks that follow a daemon's goroutines skip it.
			pprof.SetGoroutineLabels(context.Background())
			runtime.LockOSThread() // never unlocked: this thread is the children's parent for Pdeathsig
			for c := range spawnReq {
				c.done <- c.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawnReq <- spawnCall{cmd, done}
	return <-done
}

// setProcAttr puts the child in its own process group (so its descendants are killed with it) and asks the
// kernel to SIGKILL it when the daemon dies, even by kill -9. The keeper (shim) gets SIGTERM instead: it
// catches it to kill the server's group and its adopted descendants before it exits.
func setProcAttr(cmd *exec.Cmd, shim bool) {
	sig := syscall.SIGKILL
	if shim {
		sig = syscall.SIGTERM
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
}

// killGroup sends SIGKILL to the child's process group. Harmless when the group is gone.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// waitAndKillGroup waits for the child to exit without reaping it, kills what remains of its process group
// while the zombie still reserves the group id (so the id cannot have been reused), then reaps it.
func waitAndKillGroup(cmd *exec.Cmd) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	killGroup(cmd)
	return cmd.Wait()
}
