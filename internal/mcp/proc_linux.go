//go:build linux

package mcp

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// setProcAttr puts the child in its own process group (so its descendants are killed with it) and asks the
// kernel to SIGKILL it when the daemon dies, even by kill -9.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
