package rpctest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/daemon"
)

// StartOn runs a daemon on an existing install, typically one a stopped Daemon left behind (its ConfigDir), so
// tests can restart a daemon and check what survived. It listens on the same endpoint Start chose for that
// install. The config on disk is kept unless WithConfig is given; it is stopped at the end of the test.
func StartOn(t testing.TB, configDir string, opts ...Option) *Daemon {
	t.Helper()
	var o options
	for _, fn := range opts {
		fn(&o)
	}
	if o.config != "" {
		if err := os.WriteFile(filepath.Join(configDir, "config.toml"), []byte(o.config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Dir(configDir)
	endpoint := filepath.Join(root, "d.sock")
	ctx, cancel := context.WithCancel(context.Background())
	d := &Daemon{ConfigDir: configDir, Endpoint: endpoint, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan struct{})
	environ := append([]string{"ZEROCLAW_SOCKET=" + endpoint}, o.environ...)
	go func() {
		d.done <- daemon.Run(ctx, daemon.Options{
			ConfigDir: configDir,
			Ephemeral: o.ephemeral,
			Environ:   environ,
			Home:      root,
			Ready:     func(string) { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-d.done:
		cancel()
		t.Fatalf("daemon did not start on %s: %v", configDir, err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("daemon did not become ready within 20s")
	}
	t.Cleanup(func() { _ = d.Stop() })
	return d
}
