package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// zeroclaw service install/uninstall against a unit directory of the test's own (ZEROCLAW_SERVICE_DIR), run
// twice each: the unit is printed and written once, a second install and uninstall change nothing and say so,
// start refuses a unit the service manager cannot see, and systemd-analyze accepts the unit the binary wrote.
func TestServiceInstallUninstall(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Fatalf("this test checks the systemd unit; run it on Linux (CI does)")
	}
	h := home(t)
	units := filepath.Join(h, "units")
	e := env(h, "ZEROCLAW_SERVICE_DIR="+units)
	root := filepath.Join(h, ".zeroclaw")
	unit := filepath.Join(units, "zeroclaw.service")

	out, errOut, code := run(t, e, "", "service", "install")
	if code != 0 || !strings.HasPrefix(out, "Installed: "+unit+"\n") ||
		!strings.Contains(out, "ExecStart="+binary+" daemon --config-dir "+root+"\n") ||
		!strings.Contains(out, "the service manager was not told") {
		t.Fatalf("install: %d\n%s\n%s", code, out, errOut)
	}
	written, err := os.ReadFile(unit)
	if err != nil || !strings.Contains(out, string(written)) {
		t.Fatalf("the unit printed is not the unit written (%v):\n%s", err, written)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze is required to check the unit (Debian: apt-get install systemd): %v", err)
	}
	if report, err := exec.Command(analyze, "verify", unit).CombinedOutput(); err != nil || len(strings.TrimSpace(string(report))) > 0 {
		t.Fatalf("systemd-analyze verify (%v):\n%s", err, report)
	}

	out, _, code = run(t, e, "", "service", "install")
	if code != 0 || !strings.HasPrefix(out, "Already installed: "+unit+"\n") || !strings.Contains(out, "unit unchanged") {
		t.Fatalf("second install: %d\n%s", code, out)
	}
	if again, _ := os.ReadFile(unit); string(again) != string(written) {
		t.Fatal("the second install changed the unit")
	}
	_, errOut, code = run(t, e, "", "service", "start")
	if code == 0 || !strings.Contains(errOut, "ZEROCLAW_SERVICE_DIR") {
		t.Fatalf("start of a unit in a chosen directory: %d %s", code, errOut)
	}

	out, _, code = run(t, e, "", "service", "uninstall")
	if code != 0 || !strings.Contains(out, "Removed: "+unit) {
		t.Fatalf("uninstall: %d\n%s", code, out)
	}
	if _, err := os.Stat(unit); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unit still there: %v", err)
	}
	out, _, code = run(t, e, "", "service", "uninstall")
	if code != 0 || !strings.Contains(out, "not installed; nothing to remove") || strings.Contains(out, "Removed") {
		t.Fatalf("second uninstall: %d\n%s", code, out)
	}
	_, errOut, code = run(t, e, "", "service", "status")
	if code == 0 || !strings.Contains(errOut, "not installed") || !strings.Contains(errOut, "Try: zeroclaw service install") {
		t.Fatalf("status without a unit: %d %s", code, errOut)
	}
	_, errOut, code = run(t, e, "", "service", "restart")
	if code == 0 || !strings.Contains(errOut, `unknown subcommand "restart"`) {
		t.Fatalf("unknown subcommand: %d %s", code, errOut)
	}
}
