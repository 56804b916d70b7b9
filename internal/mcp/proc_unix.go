//go:build unix && !linux

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the child in its own process group. There is no Pdeathsig here: a child outlives a daemon
// killed with -9 until it reads EOF on its stdin.
func setProcAttr(cmd *exec.Cmd, _ bool) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the child's process group. Harmless when the group is gone.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// waitAndKillGroup reaps the child, then kills what remains of its group (survivors keep the id reserved).
func waitAndKillGroup(cmd *exec.Cmd) error {
	err := cmd.Wait()
	killGroup(cmd)
	return err
}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
