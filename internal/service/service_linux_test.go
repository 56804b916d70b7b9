package service

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// noManager fails the test if the service manager is called: a unit in a chosen directory is not its business.
func noManager(t *testing.T) func(context.Context, string, ...string) (string, error) {
	return func(_ context.Context, name string, args ...string) (string, error) {
		t.Errorf("service manager called: %s %v", name, args)
		return "", errors.New("not allowed")
	}
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// The generated unit passes systemd-analyze verify (which checks the syntax, the quoting and that ExecStart's
// program exists), also for a config directory with a space, a specifier, a variable and a quote in its name.
// systemd-analyze is a requirement of this test (CI installs it: package systemd), never a reason to skip it.
func TestUnitVerifiedBySystemdAnalyze(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze is required to check the unit (Debian: apt-get install systemd): %v", err)
	}
	for _, name := range []string{"plain", `odd dir 100% $HOME "q" \b`} {
		dir := filepath.Join(t.TempDir(), name)
		o := Options{Exe: testExe(t), ConfigDir: dir, UnitDir: filepath.Join(t.TempDir(), "units"), Run: noManager(t)}
		out, err := Install(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(analyze, "verify", out.Path)
		report, err := cmd.CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(report))) > 0 {
			t.Fatalf("systemd-analyze verify %s (%v):\n%s\nunit:\n%s", out.Path, err, report, out.Content)
		}
	}
}

// The unit is a user unit: it names no system target (network-online.target exists only in the system
// manager), and the user manager's verify accepts it.
func TestUserUnitNeedsNoSystemTarget(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze is required to check the unit (Debian: apt-get install systemd): %v", err)
	}
	o := Options{Exe: testExe(t), ConfigDir: t.TempDir(), UnitDir: filepath.Join(t.TempDir(), "units"), Run: noManager(t)}
	out, err := Install(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Content, "network-online.target") || strings.Contains(out.Content, "network.target") {
		t.Fatalf("a user unit depends on a system target:\n%s", out.Content)
	}
	runtime := t.TempDir() // the user manager needs a runtime directory, which a CI job may not have
	cmd := exec.Command(analyze, "--user", "verify", out.Path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	if report, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(report))) > 0 {
		t.Fatalf("systemd-analyze --user verify %s (%v):\n%s\nunit:\n%s", out.Path, err, report, out.Content)
	}
}

func TestSystemdArgQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/zeroclaw":   "/usr/bin/zeroclaw",
		"/home/a b/.zeroclaw": `"/home/a b/.zeroclaw"`,
		"/x/100%/$HOME":       "/x/100%%/$$HOME",
		`/x/"q"\b`:            `"/x/\"q\"\\b"`,
		"/x/semi;colon":       `"/x/semi;colon"`,
	} {
		got, err := systemdArg(in)
		if err != nil || got != want {
			t.Errorf("systemdArg(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := systemdArg("/x/new\nline"); err == nil {
		t.Error("a newline was accepted in a unit")
	}
}

// install and uninstall are idempotent: the second install leaves the file alone and says so, the second
// uninstall has nothing to do.
func TestInstallUninstallIdempotent(t *testing.T) {
	units := filepath.Join(t.TempDir(), "units")
	o := Options{Exe: testExe(t), ConfigDir: "/srv/zc", UnitDir: units, Run: noManager(t)}
	first, err := Install(t.Context(), o)
	if err != nil || !first.Changed || first.Path != filepath.Join(units, "zeroclaw.service") {
		t.Fatalf("first install: %+v %v", first, err)
	}
	if !strings.Contains(first.Content, "ExecStart="+o.Exe+" daemon --config-dir /srv/zc\n") ||
		!strings.Contains(first.Content, "WantedBy=default.target") {
		t.Fatalf("unit:\n%s", first.Content)
	}
	st, err := os.Stat(first.Path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("unit file: %v %v", st, err)
	}
	second, err := Install(t.Context(), o)
	if err != nil || second.Changed || second.Content != first.Content || !slices.Contains(second.Notes, "already installed; unit unchanged") {
		t.Fatalf("second install: %+v %v", second, err)
	}
	// A changed install (another config dir) rewrites the unit.
	o2 := o
	o2.ConfigDir = "/srv/other"
	if third, err := Install(t.Context(), o2); err != nil || !third.Changed {
		t.Fatalf("changed install: %+v %v", third, err)
	}
	if b, _ := os.ReadFile(first.Path); !strings.Contains(string(b), "/srv/other") {
		t.Fatalf("unit not rewritten:\n%s", b)
	}
	gone, err := Uninstall(t.Context(), o)
	if err != nil || !gone.Changed {
		t.Fatalf("uninstall: %+v %v", gone, err)
	}
	if _, err := os.Stat(first.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unit still there: %v", err)
	}
	again, err := Uninstall(t.Context(), o)
	if err != nil || again.Changed {
		t.Fatalf("second uninstall: %+v %v", again, err)
	}
	if _, err := Start(t.Context(), o); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("start without a unit: %v", err)
	}
	if _, err := Install(t.Context(), Options{Exe: "zeroclaw", ConfigDir: "/srv/zc", UnitDir: units}); err == nil {
		t.Fatal("a relative binary path was accepted")
	}
}

// In the default place, the unit is handed to systemctl --user: reloaded on install, enabled and started by
// start, stopped, reported, and disabled before it is removed. With no user manager reachable, the error says
// what to do.
func TestSystemctlUserCalls(t *testing.T) {
	home := t.TempDir()
	var calls []string
	fail := ""
	o := Options{Exe: testExe(t), ConfigDir: filepath.Join(home, ".zeroclaw"), Home: home,
		Run: func(_ context.Context, name string, args ...string) (string, error) {
			calls = append(calls, name+" "+strings.Join(args, " "))
			if fail != "" {
				return fail, errors.New("exit status 1")
			}
			return "", nil
		}}
	take := func() []string { c := calls; calls = nil; return c }
	out, err := Install(t.Context(), o)
	if err != nil || out.Path != filepath.Join(home, ".config", "systemd", "user", "zeroclaw.service") {
		t.Fatalf("install: %+v %v", out, err)
	}
	if got := take(); !slices.Equal(got, []string{"systemctl --user daemon-reload"}) {
		t.Fatalf("install called %q", got)
	}
	if _, err := Start(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if got := take(); !slices.Equal(got, []string{"systemctl --user daemon-reload", "systemctl --user enable --now zeroclaw.service"}) {
		t.Fatalf("start called %q", got)
	}
	_, _ = Stop(t.Context(), o)
	_, _ = Status(t.Context(), o)
	if got := take(); !slices.Equal(got, []string{"systemctl --user stop zeroclaw.service", "systemctl --user status --no-pager zeroclaw.service"}) {
		t.Fatalf("stop, status called %q", got)
	}
	fail = "Failed to connect to bus: No medium found"
	if _, err := Start(t.Context(), o); err == nil || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") || !strings.Contains(err.Error(), fail) {
		t.Fatalf("start without a user bus: %v", err)
	}
	take()
	fail = ""
	if _, err := Uninstall(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if got := take(); !slices.Equal(got, []string{"systemctl --user disable --now zeroclaw.service", "systemctl --user daemon-reload"}) {
		t.Fatalf("uninstall called %q", got)
	}
}
