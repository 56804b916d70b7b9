package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// The seed's quick test, driven through real socat against the real binary on the default endpoint.
func TestSocatQuickTest(t *testing.T) {
	t.Parallel()
	socat, err := exec.LookPath("socat")
	if err != nil {
		t.Fatal("socat is required for this test (apt-get install socat); .ci/run installs it")
	}
	h := home(t)
	d := start(t, env(h), "daemon")
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	waitSocket(t, d, sock)

	cmd := exec.Command(socat, "-t", "5", "-", "UNIX-CONNECT:"+sock)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":1}` + "\n" +
		`{"jsonrpc":"2.0","method":"status","params":{},"id":2}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("socat: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 reply lines, got %d: %q", len(lines), out)
	}
	for _, want := range []string{`"protocolVersion":1`, `"serverVersion":"0.8.6"`, `"id":1`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("initialize reply %s lacks %s", lines[0], want)
		}
	}
	pid := strconv.Itoa(d.cmd.Process.Pid)
	for _, want := range []string{`"pid":` + pid, `"id":2`, `"local_ipc_endpoint":"` + sock + `"`} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("status reply %s lacks %s", lines[1], want)
		}
	}
}

// A fresh install gets the default config (0600, schema 3, echo provider) and a private socket.
func TestFreshInstallLayout(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	root := filepath.Join(h, ".zeroclaw")
	sock := filepath.Join(root, "data", "daemon.sock")
	waitSocket(t, d, sock)

	cfg, err := os.ReadFile(filepath.Join(root, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"schema_version = 3", `model_provider = "echo.default"`} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("default config lacks %q:\n%s", want, cfg)
		}
	}
	if m := mode(t, filepath.Join(root, "config.toml")).Perm(); m != 0o600 {
		t.Errorf("config.toml mode %o, want 600", m)
	}
	if m := mode(t, filepath.Join(root, "data")).Perm(); m != 0o700 {
		t.Errorf("socket dir mode %o, want 700", m)
	}
	sm := mode(t, sock)
	if sm&os.ModeSocket == 0 || sm.Perm() != 0o600 {
		t.Errorf("socket mode %v, want socket 0600", sm)
	}
	lockPID, _ := os.ReadFile(sock + ".lock")
	if strings.TrimSpace(string(lockPID)) != strconv.Itoa(d.cmd.Process.Pid) {
		t.Errorf("socket lock holds %q, want the daemon pid %d", lockPID, d.cmd.Process.Pid)
	}
}

// A second daemon on the same install is refused with the first one's pid; the first keeps serving and its
// socket survives the second's exit.
func TestSecondDaemonRefused(t *testing.T) {
	t.Parallel()
	h := home(t)
	first := start(t, env(h), "daemon")
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	waitSocket(t, first, sock)

	_, stderr, code := run(t, env(h), "", "daemon")
	if code == 0 {
		t.Fatal("second daemon exited 0")
	}
	pid := strconv.Itoa(first.cmd.Process.Pid)
	if !strings.Contains(stderr, "pid "+pid) || !strings.Contains(stderr, "Try: zeroclaw stop") {
		t.Errorf("refusal should name pid %s and the stop hint, got:\n%s", pid, stderr)
	}
	if first.exited() {
		t.Fatal("first daemon exited")
	}
	if got := statusPID(t, sock); strconv.Itoa(got) != pid {
		t.Errorf("status pid %d, want %s", got, pid)
	}
	if mode(t, sock)&os.ModeSocket == 0 {
		t.Error("the first daemon's socket is gone")
	}
}

// Another install pointed at the same endpoint with ZEROCLAW_SOCKET is refused by the endpoint lock.
func TestSharedEndpointRefused(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := filepath.Join(h, "shared.sock")
	first := start(t, env(h, "ZEROCLAW_SOCKET="+sock, "ZEROCLAW_CONFIG_DIR="+filepath.Join(h, "a")), "daemon")
	waitSocket(t, first, sock)
	_, stderr, code := run(t, env(h, "ZEROCLAW_SOCKET="+sock, "ZEROCLAW_CONFIG_DIR="+filepath.Join(h, "b")), "", "daemon")
	if code == 0 || !strings.Contains(stderr, "pid "+strconv.Itoa(first.cmd.Process.Pid)) {
		t.Fatalf("want refusal naming pid %d, got code %d:\n%s", first.cmd.Process.Pid, code, stderr)
	}
	statusPID(t, sock)
}

// A stale socket left by a dead daemon is replaced.
func TestStaleSocketReplaced(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := filepath.Join(h, "stale.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if mode(t, sock)&os.ModeSocket == 0 {
		t.Fatal("setup: no stale socket")
	}
	d := start(t, env(h, "ZEROCLAW_SOCKET="+sock), "daemon")
	waitSocket(t, d, sock)
	if statusPID(t, sock) != d.cmd.Process.Pid {
		t.Fatal("status answered by someone else")
	}
}

// A path that is not a socket is never removed: the daemon refuses to start.
func TestNonSocketPathLeftAlone(t *testing.T) {
	t.Parallel()
	h := home(t)
	path := filepath.Join(h, "notasocket")
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, env(h, "ZEROCLAW_SOCKET="+path), "", "daemon")
	if code == 0 {
		t.Fatal("daemon started over a regular file")
	}
	if !strings.Contains(stderr, "not a socket") || !strings.Contains(stderr, path) {
		t.Errorf("error should say the path is not a socket, got:\n%s", stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Errorf("file content changed: %q", b)
	}
}

// status without a daemon exits 1 with a hint; with one it prints the pid.
func TestStatusCommand(t *testing.T) {
	t.Parallel()
	h := home(t)
	_, stderr, code := run(t, env(h), "", "status")
	if code != 1 || !strings.Contains(stderr, "no daemon is running") || !strings.Contains(stderr, "Try: zeroclaw daemon") {
		t.Fatalf("status without daemon: code %d, stderr:\n%s", code, stderr)
	}
	d := start(t, env(h), "daemon")
	waitSocket(t, d, filepath.Join(h, ".zeroclaw", "data", "daemon.sock"))
	out, stderr, code := run(t, env(h), "", "status")
	if code != 0 || !strings.Contains(out, "pid:         "+strconv.Itoa(d.cmd.Process.Pid)) {
		t.Fatalf("status: code %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

// zeroclaw stop shuts the daemon down gracefully: exit 0, socket removed, lock files kept.
func TestStopCommand(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	waitSocket(t, d, sock)
	out, stderr, code := run(t, env(h), "", "stop")
	if code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("stop: code %d\n%s\n%s", code, out, stderr)
	}
	if c := d.wait(t, 10*time.Second); c != 0 {
		t.Fatalf("daemon exit code %d", c)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still present after stop: %v", err)
	}
	if _, err := os.Stat(sock + ".lock"); err != nil {
		t.Errorf("socket lock file should be kept: %v", err)
	}
}

// SIGTERM and SIGINT shut down gracefully with exit 0 and remove the socket.
func TestSignalsShutDownGracefully(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			h := home(t)
			d := start(t, env(h), "daemon")
			sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
			waitSocket(t, d, sock)
			c := dialRPC(t, sock)
			c.Initialize()
			signal(t, d, sig)
			if code := d.wait(t, 15*time.Second); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			if _, err := os.Lstat(sock); !os.IsNotExist(err) {
				t.Errorf("socket still present: %v", err)
			}
			for _, want := range []string{"shutting down", "daemon stopped"} {
				if !strings.Contains(d.stderr.String(), want) {
					t.Errorf("log lacks %q", want)
				}
			}
		})
	}
}

// kill -9 leaves a stale socket behind; the next daemon takes over without help.
func TestRestartAfterKill9(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	for i := 0; i < 3; i++ {
		d := start(t, env(h), "daemon")
		waitSocket(t, d, sock)
		if statusPID(t, sock) != d.cmd.Process.Pid {
			t.Fatalf("round %d: status from the wrong daemon", i)
		}
		signal(t, d, syscall.SIGKILL)
		d.wait(t, 10*time.Second)
		if mode(t, sock)&os.ModeSocket == 0 {
			t.Fatalf("round %d: expected the killed daemon's stale socket to remain", i)
		}
	}
}

// A config that fails to parse stops the daemon with an error naming the file, the line and the key.
// A syntax error stops the start, naming file, line and key; the file is left as it is.
func TestBadConfigRefused(t *testing.T) {
	t.Parallel()
	cfg := "schema_version = 3\n\n[rpc]\nmax_local_connections = \n"
	h, root := homeWithConfig(t, cfg)
	_, stderr, code := run(t, env(h), "", "daemon")
	if code == 0 {
		t.Fatal("daemon started with a config that does not parse")
	}
	for _, want := range []string{filepath.Join(root, "config.toml"), ":4", "max_local_connections"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("error lacks %q:\n%s", want, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "config.toml")); string(b) != cfg {
		t.Error("the invalid config was rewritten")
	}
}

// A config that parses but has broken entries starts, as upstream's does: a setting of the wrong type falls
// back to its default and an agent naming a missing provider is disabled, each with a warning naming its path
// and line; the rest serves, and the file is left as it is.
func TestBrokenEntriesDisabledAtStart(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	cfg := string(config.DefaultTOML()) + "\n[rpc]\nmax_local_connections = \"many\"\n\n[agents.broken]\nmodel_provider = \"openai.nowhere\"\nrisk_profile = \"supervised\"\n"
	writeFile(t, filepath.Join(root, "config.toml"), cfg)
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialRPC(t, sock)
	c.Initialize()
	if v := configGetValue(t, c, "rpc.max_local_connections"); v != float64(512) {
		t.Errorf("rpc.max_local_connections = %v, want the default 512", v)
	}
	if r := c.Call("config/get", map[string]any{"prop": "agents.broken.model_provider"}, 3); r["error"] == nil {
		t.Errorf("the broken agent is served: %v", r)
	}
	if v := configGetValue(t, c, "agents.default.model_provider"); v != "echo.default" {
		t.Errorf("agents.default.model_provider = %v", v)
	}
	lines := func(s string) int { return strings.Count(cfg[:strings.Index(cfg, s)], "\n") + 1 }
	for _, want := range []string{
		fmt.Sprintf("rpc.max_local_connections disabled: rpc.max_local_connections: config: invalid value: expected integer, got string (line %d)", lines("max_local_connections")),
		fmt.Sprintf(`agents.broken disabled: agents.broken.model_provider: provider \"openai.nowhere\" is not defined under providers.models (line %d)`, lines(`model_provider = "openai.nowhere"`)),
	} {
		if !strings.Contains(d.stderr.String(), want) {
			t.Errorf("daemon log lacks %q:\n%s", want, d.stderr.String())
		}
	}
	if out := runOK(t, env(h), "", "agent", "-a", "default", "-m", "still here"); out != "still here\n" {
		t.Errorf("the healthy agent answered %q", out)
	}
	out, _, code := run(t, env(h), "", "config", "validate")
	if code != 1 || !strings.Contains(out, "agents.broken.model_provider") || !strings.Contains(out, "rpc.max_local_connections") {
		t.Errorf("config validate: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "config.toml")); string(b) != cfg {
		t.Error("the config was rewritten")
	}
}

// zeroclaw rpc initializes, sends each stdin line and prints every reply.
func TestRPCCommand(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, filepath.Join(h, ".zeroclaw", "data", "daemon.sock"))
	out, stderr, code := run(t, env(h), `{"jsonrpc":"2.0","method":"status","id":7}`+"\n"+`{"jsonrpc":"2.0","method":"nope","id":8}`+"\n", "rpc")
	if code != 0 {
		t.Fatalf("rpc: code %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"protocol_version":1`) ||
		!strings.Contains(lines[1], `"id":7`) || !strings.Contains(lines[2], `-32601`) {
		t.Fatalf("unexpected rpc output:\n%s", out)
	}
	out, _, _ = run(t, env(h), `{"jsonrpc":"2.0","method":"status","id":1}`+"\n", "rpc", "--raw")
	if !strings.Contains(out, "-32010") {
		t.Fatalf("--raw should skip initialize, got:\n%s", out)
	}
}

// A symlink planted at <socket>.lock in a shared sticky directory (a socket in /tmp) is refused: the daemon
// does not write its pid through it into the victim file.
func TestSymlinkedEndpointLockRefused(t *testing.T) {
	t.Parallel()
	h := home(t)
	shared := filepath.Join(h, "tmp")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(h, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shared, "zc.sock")
	if err := os.Symlink(victim, sock+".lock"); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, env(h, "ZEROCLAW_SOCKET="+sock), "", "daemon")
	if code == 0 {
		t.Fatal("daemon started with a symlinked endpoint lock")
	}
	if !strings.Contains(stderr, sock+".lock") || !strings.Contains(stderr, "symbolic link") ||
		!strings.Contains(stderr, "Try: ") {
		t.Errorf("refusal should name the lock file, say it is a symbolic link and give a hint, got:\n%s", stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("victim file changed: %q", b)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a socket was bound: %v", err)
	}
}

// A lock file planted and held by another user does not make the daemon name a pid written by that user.
func TestForeignEndpointLockNamesOwner(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		// Not a skip: the refusal of a foreign lock is only provable with a file another uid owns. CI runs as root.
		t.Fatal("this test plants a file owned by another uid and needs root: run the suite as root, as .ci/run does")
	}
	h := home(t)
	shared := filepath.Join(h, "tmp")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shared, "zc.sock")
	if err := os.WriteFile(sock+".lock", []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sock+".lock", 65534, 65534); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(sock + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	_, stderr, code := run(t, env(h, "ZEROCLAW_SOCKET="+sock), "", "daemon")
	if code == 0 {
		t.Fatal("daemon started with a foreign endpoint lock")
	}
	if !strings.Contains(stderr, "uid 65534") || !strings.Contains(stderr, sock+".lock") {
		t.Errorf("refusal should name the lock file's owner uid 65534, got:\n%s", stderr)
	}
	if strings.Contains(stderr, "(pid ") || strings.Contains(stderr, "another daemon") {
		t.Errorf("refusal names a daemon pid read from another user's file:\n%s", stderr)
	}
	if b, _ := os.ReadFile(sock + ".lock"); string(b) != "1\n" {
		t.Errorf("foreign lock file changed: %q", b)
	}
}
