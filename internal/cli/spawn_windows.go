//go:build windows

package cli

import (
	"os/exec"
	"syscall"
)

// detachedProcess is DETACHED_PROCESS: the child gets no console, so closing ours does not end it.
const detachedProcess = 0x00000008

// detach starts the child in its own process group without a console, so the terminal's Ctrl-C does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess,
		HideWindow:    true,
	}
}
