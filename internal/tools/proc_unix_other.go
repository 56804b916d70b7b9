//go:build unix && !linux

package tools

import "os/exec"

// waitAndKillGroup reaps the shell, then kills what remains of its process group. Survivors keep the group
// id reserved, so the kill cannot reach an unrelated process while any of them is alive.
func waitAndKillGroup(cmd *exec.Cmd) error {
	err := cmd.Wait()
	killProcessGroup(cmd)
	return err
}
