//go:build unix

package localsock

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// sockDir returns a short temporary directory: Unix socket paths are limited to ~104 bytes and t.TempDir()
// paths embed the test name.
func sockDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zci")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func mustListen(t *testing.T, endpoint string) *Listener {
	t.Helper()
	l, err := Listen(endpoint)
	if err != nil {
		t.Fatalf("Listen(%s): %v", endpoint, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// roundTrip dials endpoint, accepts on l, and checks one byte flows; it returns the accepted conn.
func roundTrip(t *testing.T, l net.Listener, endpoint string) net.Conn {
	t.Helper()
	c, err := Dial(t.Context(), endpoint)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(s, b); err != nil || b[0] != 'x' {
		t.Fatalf("read %q, %v", b, err)
	}
	return s
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// staleSocket leaves a socket file at path with nobody listening on it.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	ul.Close()
	if mode(t, path).Type() != fs.ModeSocket {
		t.Fatal("stale socket file missing")
	}
}

func TestListenModesAndServes(t *testing.T) {
	dir := filepath.Join(sockDir(t), "a", "data")
	endpoint := filepath.Join(dir, "daemon.sock")
	l := mustListen(t, endpoint)

	if got := mode(t, dir).Perm(); got != 0o700 {
		t.Errorf("socket dir mode %v, want 0700", got)
	}
	if m := mode(t, endpoint); m.Type() != fs.ModeSocket || m.Perm() != 0o600 {
		t.Errorf("socket mode %v, want socket 0600", m)
	}
	if got := mode(t, endpoint+".lock").Perm(); got != 0o600 {
		t.Errorf("lock file mode %v, want 0600", got)
	}
	if got := readPIDFile(t, endpoint+".lock"); got != os.Getpid() {
		t.Errorf("lock file pid %d, want %d", got, os.Getpid())
	}
	if l.Endpoint() != endpoint || l.Addr().String() != endpoint {
		t.Errorf("Endpoint %q Addr %q, want %q", l.Endpoint(), l.Addr(), endpoint)
	}
	roundTrip(t, l, endpoint)
}

func TestListenTightensExistingDir(t *testing.T) {
	dir := filepath.Join(sockDir(t), "open")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // undo umask
		t.Fatal(err)
	}
	mustListen(t, filepath.Join(dir, "daemon.sock"))
	if got := mode(t, dir).Perm(); got != 0o700 {
		t.Errorf("existing socket dir mode %v, want it tightened to 0700", got)
	}
}

func TestListenLeavesStickyDirAlone(t *testing.T) {
	dir := filepath.Join(sockDir(t), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	endpoint := filepath.Join(dir, "zc.sock")
	mustListen(t, endpoint)
	if got := mode(t, dir); got.Perm() != 0o777 || got&fs.ModeSticky == 0 {
		t.Errorf("sticky shared dir mode changed to %v", got)
	}
	if got := mode(t, endpoint).Perm(); got != 0o600 {
		t.Errorf("socket mode %v, want 0600", got)
	}
}

func TestListenTwiceInSameProcess(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	l := mustListen(t, endpoint)

	_, err := Listen(endpoint)
	var iu *InUseError
	if !errors.As(err, &iu) {
		t.Fatalf("second Listen: %v, want *InUseError", err)
	}
	if iu.PID != os.Getpid() || iu.Endpoint != endpoint {
		t.Errorf("InUseError %+v, want pid %d endpoint %s", iu, os.Getpid(), endpoint)
	}
	if !errors.Is(err, ErrInUse) {
		t.Error("errors.Is(err, ErrInUse) is false")
	}
	if want := fmt.Sprintf("another daemon (pid %d) is serving %s", os.Getpid(), endpoint); err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	// The refused attempt must leave the live server untouched.
	roundTrip(t, l, endpoint)
}

func TestListenHeldByChildProcess(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	h := startHelper(t, "listen", endpoint)

	_, err := Listen(endpoint)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != h.PID() {
		t.Fatalf("Listen while child serves: %v, want *InUseError with pid %d", err, h.PID())
	}

	// Peer on the client side names the server process.
	c, err := Dial(t.Context(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := Peer(c)
	c.Close()
	if err != nil || pc.PID != h.PID() {
		t.Errorf("Peer of the child's socket = %+v, %v; want pid %d", pc, err, h.PID())
	}

	h.Stop(t)
	if _, err := os.Lstat(endpoint); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("child's clean Close should unlink its socket: %v", err)
	}
	l := mustListen(t, endpoint)
	roundTrip(t, l, endpoint)
}

func TestListenAfterChildKilledReplacesStaleSocket(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	h := startHelper(t, "listen", endpoint)
	h.Kill(t)
	if mode(t, endpoint).Type() != fs.ModeSocket {
		t.Fatal("a killed daemon leaves its socket behind; the test relies on it")
	}
	l := mustListen(t, endpoint)
	roundTrip(t, l, endpoint)
}

func TestListenReplacesStaleSocket(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	staleSocket(t, endpoint)
	if _, err := Dial(t.Context(), endpoint); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Dial to a stale socket: %v, want ErrNotRunning", err)
	}
	l := mustListen(t, endpoint)
	if m := mode(t, endpoint).Perm(); m != 0o600 {
		t.Errorf("socket mode %v, want 0600", m)
	}
	roundTrip(t, l, endpoint)
}

func TestListenRefusesNonSocket(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	if err := os.WriteFile(endpoint, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(endpoint)
	if !errors.Is(err, ErrNotSocket) || !strings.Contains(err.Error(), endpoint) {
		t.Fatalf("Listen over a regular file: %v, want ErrNotSocket naming the path", err)
	}
	if b, err := os.ReadFile(endpoint); err != nil || string(b) != "precious" {
		t.Errorf("regular file was touched: %q, %v", b, err)
	}
	// The failed Listen released the endpoint lock.
	lock, err := install.AcquireLock(endpoint + ".lock")
	if err != nil {
		t.Fatalf("endpoint lock still held after failed Listen: %v", err)
	}
	lock.Release()
}

func TestListenRefusesLiveServerWithoutLock(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	// A server that does not take our lock, with a pid left in the lock file by its last owner.
	if err := os.WriteFile(endpoint+".lock", []byte("4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign, err := net.Listen("unix", endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close()

	_, err = Listen(endpoint)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != 4242 {
		t.Fatalf("Listen over a live server: %v, want *InUseError with pid 4242", err)
	}
	// Still served: the first connection waiting is our probe, then a fresh one works.
	probe, err := foreign.Accept()
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	roundTrip(t, foreign, endpoint)
}

func TestListenLiveServerUnknownPID(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	foreign, err := net.Listen("unix", endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close()
	_, err = Listen(endpoint)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != 0 {
		t.Fatalf("Listen over a live server with no lock file: %v, want *InUseError with pid 0", err)
	}
}

func TestCloseUnlinksOwnSocketAndReleasesLock(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	l := mustListen(t, endpoint)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	if _, err := os.Lstat(endpoint); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket not unlinked: %v", err)
	}
	if _, err := os.Stat(endpoint + ".lock"); err != nil {
		t.Errorf("lock file must never be unlinked: %v", err)
	}
	if _, err := Dial(t.Context(), endpoint); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Dial after Close: %v, want ErrNotRunning", err)
	}
	l2 := mustListen(t, endpoint)
	roundTrip(t, l2, endpoint)
}

func TestCloseKeepsReplacementSocket(t *testing.T) {
	dir := sockDir(t)
	endpoint := filepath.Join(dir, "daemon.sock")
	l := mustListen(t, endpoint)

	other := filepath.Join(dir, "other.sock")
	repl, err := net.ListenUnix("unix", &net.UnixAddr{Name: other, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	repl.SetUnlinkOnClose(false)
	defer repl.Close()
	if err := os.Rename(other, endpoint); err != nil {
		t.Fatal(err)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if mode(t, endpoint).Type() != fs.ModeSocket {
		t.Fatal("replacement socket was removed")
	}
	roundTrip(t, repl, endpoint) // and it is still the replacement that answers
}

func TestPeerReportsOwnProcess(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	l := mustListen(t, endpoint)
	s := roundTrip(t, l, endpoint)

	pc, err := Peer(s)
	if err != nil {
		t.Fatal(err)
	}
	if pc.PID != os.Getpid() || pc.UID != os.Getuid() {
		t.Errorf("Peer = %+v, want pid %d uid %d", pc, os.Getpid(), os.Getuid())
	}
	if want := fmt.Sprintf("unix:pid=%d,uid=%d", os.Getpid(), os.Getuid()); pc.Label != want {
		t.Errorf("Label %q, want %q", pc.Label, want)
	}
}

func TestPeerWithoutSocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := Peer(a); !errors.Is(err, ErrNoPeerCred) {
		t.Errorf("Peer(net.Pipe) = %v, want ErrNoPeerCred", err)
	}
}

func TestDialMissing(t *testing.T) {
	_, err := Dial(t.Context(), filepath.Join(sockDir(t), "none.sock"))
	if !errors.Is(err, ErrNotRunning) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Dial to a missing socket: %v, want ErrNotRunning wrapping ENOENT", err)
	}
}

func TestStopAcceptingThenClose(t *testing.T) {
	endpoint := filepath.Join(sockDir(t), "daemon.sock")
	l := mustListen(t, endpoint)
	s := roundTrip(t, l, endpoint)

	if err := l.StopAccepting(); err != nil {
		t.Fatal(err)
	}
	if err := l.StopAccepting(); err != nil {
		t.Errorf("second StopAccepting: %v", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after StopAccepting: %v, want net.ErrClosed", err)
	}
	// Between stop and Close the endpoint is still owned: file present, lock held, accepted conns alive.
	if mode(t, endpoint).Type() != fs.ModeSocket {
		t.Error("socket file removed by StopAccepting")
	}
	if _, err := Listen(endpoint); !errors.Is(err, ErrInUse) {
		t.Errorf("Listen during drain: %v, want ErrInUse", err)
	}
	if _, err := s.Write([]byte("y")); err != nil {
		t.Errorf("accepted conn broken by StopAccepting: %v", err)
	}

	if err := l.Close(); err != nil {
		t.Fatalf("Close after StopAccepting: %v", err)
	}
	if _, err := os.Lstat(endpoint); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket not unlinked by Close: %v", err)
	}
}
