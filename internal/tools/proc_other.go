//go:build !unix

package tools

import "os/exec"

// setProcessGroup has no portable equivalent here; only the shell process itself is killed.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills the shell process (children may survive on this platform).
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.ProcessState == nil {
		_ = cmd.Process.Kill()
	}
}

func waitAndKillGroup(cmd *exec.Cmd) error { return cmd.Wait() }
