//go:build linux

package tools

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"
)

// waitAndKillGroup waits for the shell to exit without reaping it, kills what remains of its process group
// while the zombie still reserves the group id (so the id cannot have been reused), then reaps it.
func waitAndKillGroup(cmd *exec.Cmd) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	killProcessGroup(cmd)
	return cmd.Wait()
}
