// Package e2e drives the real zeroclaw binary: it is built once per test run and started as a child process on
// temporary installs, then checked through its socket, its files and its exit status.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

var binary string

func TestMain(m *testing.M) {
	if base := os.Getenv(attackerEnv); base != "" { // TestGatewayTakeoverAsAnotherUID's attacker, as another uid
		os.Exit(runAttacker(base))
	}
	if p := os.Getenv(outsideReaderEnv); p != "" {
		os.Exit(outsideRead(p))
	}
	dir, err := os.MkdirTemp("", "zc-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "zeroclaw")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/zeroclaw")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zeroclaw:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// home is a temporary HOME with a short path, so the default endpoint ~/.zeroclaw/data/daemon.sock fits.
func home(t *testing.T) string {
	dir, err := os.MkdirTemp("", "zch")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// homeWithConfig is a fresh HOME whose install root holds cfg as its config.toml. It returns the HOME and the
// install root.
func homeWithConfig(t *testing.T, cfg string) (string, string) {
	t.Helper()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return h, root
}

// homeWithOpenAI is a fresh HOME whose install's default agent talks to an OpenAI-compatible backend at url
// under the provider alias openai.<alias>. It returns the HOME and the install root.
func homeWithOpenAI(t *testing.T, alias, url string) (string, string) {
	t.Helper()
	cfg := fmt.Sprintf(`schema_version = 3

[providers.models.openai.%s]
uri = %q
model = "m"

[agents.default]
model_provider = "openai.%s"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
`, alias, url, alias)
	return homeWithConfig(t, cfg)
}

// env is a minimal, hermetic environment for the binary. Its gateway binds a kernel-picked port
// (ZEROCLAW_gateway__port=0: an override in memory only, config.toml stays as written), so the daemons of
// parallel tests, and of other packages' tests beside this one, never race for the default port 42617. A test
// about the port its config sets uses envOwnPort.
func env(homeDir string, extra ...string) []string {
	return append(envOwnPort(homeDir, "ZEROCLAW_gateway__port=0"), extra...)
}

// envOwnPort is env without the gateway port override: the daemon binds the port its config.toml sets (the
// default 42617 when it sets none). Tests using it do not run in parallel.
func envOwnPort(homeDir string, extra ...string) []string {
	return append([]string{"HOME=" + homeDir, "PATH=" + os.Getenv("PATH")}, extra...)
}

// proc is a running zeroclaw child process.
type proc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the binary with args in the background; it is killed at the end of the test if still running.
func start(t *testing.T, environ []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = environ
	return startCmd(t, cmd, fmt.Sprint(args))
}

// startCmd starts cmd with its stderr kept, and kills it at the end of the test if still running; label names
// it in the stderr logged when the test failed.
func startCmd(t *testing.T, cmd *exec.Cmd, label string) *proc {
	t.Helper()
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", label, p.stderr.String())
		}
	})
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit and returns its exit code.
// stderrHas reports whether the process's stderr holds every one of subs, waiting up to 10 s for them: the
// stderr copy runs behind a pipe, so a line the daemon wrote before answering a call may not be read yet when
// the answer arrives.
func (p *proc) stderrHas(subs ...string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		log, all := p.stderr.String(), true
		for _, sub := range subs {
			all = all && strings.Contains(log, sub)
		}
		if all || time.Now().After(deadline) {
			return all
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("process did not exit within %s; stderr:\n%s", timeout, p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("wait: %v", p.err)
	}
	return 0
}

// run runs the binary to completion with stdin and returns stdout, stderr and the exit code.
func run(t *testing.T, environ []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = environ
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// waitSocket waits until something accepts connections at path.
func waitSocket(t *testing.T, p *proc, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if p != nil && p.exited() {
			t.Fatalf("daemon exited before serving %s; stderr:\n%s", path, p.stderr.String())
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nothing serves %s after 20s", path)
}

// dialRPC connects an NDJSON client for checks against the real binary.
func dialRPC(t *testing.T, path string) *ndjson.Client {
	t.Helper()
	return ndjson.Dial(t, path)
}

func statusPID(t *testing.T, sock string) int {
	t.Helper()
	c := dialRPC(t, sock)
	c.Initialize()
	r := c.Call("status", map[string]any{}, 2)
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("status failed: %v", r)
	}
	return int(res["pid"].(float64))
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func signal(t *testing.T, p *proc, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}
