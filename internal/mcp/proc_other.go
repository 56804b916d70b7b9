//go:build !unix

package mcp

import "os/exec"

// setProcAttr has no portable equivalent here: only the child itself is killed, best effort.
func setProcAttr(cmd *exec.Cmd, _ bool) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func waitAndKillGroup(cmd *exec.Cmd) error { return cmd.Wait() }

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
