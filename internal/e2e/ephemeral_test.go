package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An ephemeral daemon never exits before a first client, survives a reconnect within the grace period, and exits
// by itself (code 0, socket removed) after the last client leaves.
func TestEphemeralLifecycle(t *testing.T) {
	h := home(t)
	d := start(t, env(h), "daemon", "--ephemeral")
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	waitSocket(t, d, sock) // waitSocket's probe connects and disconnects: that is a first client.

	// Reconnect within the grace: the probe's departure must not end the daemon while this client is here.
	a := dialRPC(t, sock)
	a.Initialize()
	time.Sleep(2 * EphemeralGraceForTest)
	if d.exited() {
		t.Fatalf("ephemeral daemon exited while a client was connected:\n%s", d.stderr.String())
	}
	if r := a.Call("status", map[string]any{}, 2); r["result"] == nil {
		t.Fatalf("status failed: %v", r)
	}
	// Leave and come back quickly: still alive.
	a.Conn().Close()
	b := dialRPC(t, sock)
	b.Initialize()
	time.Sleep(2 * EphemeralGraceForTest)
	if d.exited() {
		t.Fatal("ephemeral daemon exited although a client reconnected within the grace period")
	}
	b.Conn().Close()
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// EphemeralGraceForTest mirrors daemon.EphemeralGrace (1 s).
const EphemeralGraceForTest = time.Second

// Without any client, an ephemeral daemon keeps running past the grace period.
func TestEphemeralWaitsForFirstClient(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon", "--ephemeral")
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Lstat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) || d.exited() {
			t.Fatalf("socket never appeared:\n%s", d.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(3 * EphemeralGraceForTest)
	if d.exited() {
		t.Fatalf("ephemeral daemon exited before any client connected:\n%s", d.stderr.String())
	}
	c := dialRPC(t, sock)
	c.Initialize()
	c.Conn().Close()
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
