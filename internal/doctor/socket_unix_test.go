//go:build unix

package doctor_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/doctor"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// leaveSocket binds the install's socket and closes it without removing the file, as a killed daemon leaves it.
func leaveSocket(t *testing.T, l install.Layout) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: l.SocketPath(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

func TestSocketFindings(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	offline := doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true}

	// A daemon holds the install lock and serves the socket.
	lock, err := install.LockInstall(l)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", l.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	res := doctor.Run(context.Background(), offline)
	if d := find(t, res, "daemon-live"); d.Message != fmt.Sprintf("a daemon (pid %d) holds %s", os.Getpid(), l.InstallLockPath()) {
		t.Fatalf("finding: %+v", d)
	}
	find(t, res, "socket-ok")
	assertClean(t, res)

	// It dies without cleaning up: the lock is a harmless leftover, the socket stale.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	lock.Release()
	res = doctor.Run(context.Background(), offline)
	find(t, res, "lock-stale")
	if d := find(t, res, "socket-stale"); d.Severity != api.SeverityWarn || d.Path != l.SocketPath() {
		t.Fatalf("finding: %+v", d)
	}

	// A socket another user put there is an error.
	if os.Getuid() != 0 {
		// Not a skip: a socket owned by another uid can only be planted by root. CI runs as root.
		t.Fatal("this test plants a socket owned by another uid and needs root: run the suite as root, as .ci/run does")
	}
	if err := os.Remove(l.SocketPath()); err != nil {
		t.Fatal(err)
	}
	leaveSocket(t, l)
	if err := os.Lchown(l.SocketPath(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if d := find(t, doctor.Run(context.Background(), offline), "socket-foreign-owner"); d.Severity != api.SeverityError || d.Path != l.SocketPath() {
		t.Fatalf("finding: %+v", d)
	}
}
