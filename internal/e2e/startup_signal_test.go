package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A SIGTERM that lands while the daemon is still starting (its socket exists, its stores are still opening) is a
// clean stop: exit 0, no error, the socket removed, and the next start on the same install serves normally.
// Fresh installs, several times over: the window is tens of milliseconds. The gateway binds an ephemeral port:
// another test's daemon may hold the default one, and its warning would fail the "no warning" check.
func TestSIGTERMDuringStartupExitsCleanly(t *testing.T) {
	for i := 0; i < 6; i++ {
		h := home(t)
		env := func(h string) []string { return env(h, "ZEROCLAW_gateway__port=0") }
		sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
		d := start(t, env(h), "daemon")
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := os.Lstat(sock); err == nil {
				break
			}
			if d.exited() || time.Now().After(deadline) {
				t.Fatalf("run %d: no socket; stderr:\n%s", i, d.stderr.String())
			}
			time.Sleep(200 * time.Microsecond)
		}
		signal(t, d, syscall.SIGTERM)
		if code := d.wait(t, 15*time.Second); code != 0 || strings.Contains(d.stderr.String(), "Error") {
			t.Fatalf("run %d: exit %d; stderr:\n%s", i, code, d.stderr.String())
		}
		if _, err := os.Lstat(sock); !os.IsNotExist(err) {
			t.Fatalf("run %d: socket left behind: %v", i, err)
		}

		again := start(t, env(h), "daemon")
		waitSocket(t, again, sock)
		if pid := statusPID(t, sock); pid != again.cmd.Process.Pid {
			t.Fatalf("run %d: status pid %d, want %d", i, pid, again.cmd.Process.Pid)
		}
		signal(t, again, syscall.SIGTERM)
		if code := again.wait(t, 15*time.Second); code != 0 || strings.Contains(again.stderr.String(), "level=WARN") {
			t.Fatalf("run %d: restart exit %d; stderr:\n%s", i, code, again.stderr.String())
		}
	}
}
