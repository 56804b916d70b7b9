//go:build linux

package localsock

import (
	"os"
	"os/exec"
	"testing"
)

// TestDescendantOf: a child of this process is a descendant; this process, its parent and
// init are not; a pid that does not exist is not.
func TestDescendantOf(t *testing.T) {
	me := os.Getpid()
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if !DescendantOf(cmd.Process.Pid, me) {
		t.Errorf("child %d is not a descendant of %d", cmd.Process.Pid, me)
	}
	for _, pid := range []int{me, os.Getppid(), 1, -1, 0, 1 << 30} {
		if DescendantOf(pid, me) {
			t.Errorf("pid %d reported a descendant of %d", pid, me)
		}
	}
}
