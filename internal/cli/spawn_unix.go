//go:build unix

package cli

import (
	"os/exec"
	"syscall"
)

// detach puts the child in its own session so the terminal's Ctrl-C and hangup do not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
