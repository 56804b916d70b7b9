package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/install/legacy"
)

// oldConfig is a minimal upstream schema v2 config: the offline provider, and the agent v2 ran implicitly.
const oldConfig = "# kept as it is\nschema_version = 2\n\n[providers]\ndefault_provider = \"echo\"\n"

// runUntilReady starts the daemon on root and stops it as soon as it accepts connections.
func runUntilReady(t *testing.T, root string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := Run(ctx, Options{
		ConfigDir: root,
		Home:      t.TempDir(),
		Ready:     func(string) { cancel() },
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A kill -9 after the legacy workspace was emptied and removed but before the layout was marked done leaves an
// old config and no workspace. The next start marks the layout, and never stamps schema_version = 3 onto the
// unmigrated config (state.md §1): the file stays byte for byte. A directory made later at <install>/workspace
// is the user's, not a legacy layout, and stays.
func TestRunMarksLegacyLayoutWithoutStamping(t *testing.T) {
	root := t.TempDir()
	cfgPath := filepath.Join(root, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(oldConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// What the migration left before the crash: everything in place, the workspace gone.
	if err := os.MkdirAll(filepath.Join(root, "agents", "default", "workspace"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "agents", "default", "workspace", "AGENTS.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	runUntilReady(t, root)
	if b, err := os.ReadFile(cfgPath); err != nil || string(b) != oldConfig {
		t.Fatalf("config.toml after start = %q, %v; want it unchanged", b, err)
	}
	if !legacy.Done(install.Layout{Root: root, DataDir: filepath.Join(root, "data")}) {
		t.Fatal("the layout is not marked done")
	}

	// A workspace dir made afterwards is the user's, not a legacy layout: it stays.
	mine := filepath.Join(root, "workspace", "mine.txt")
	if err := os.MkdirAll(filepath.Dir(mine), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	runUntilReady(t, root)
	if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
		t.Fatalf("%s = %q, %v", mine, b, err)
	}
	if b, err := os.ReadFile(cfgPath); err != nil || string(b) != oldConfig {
		t.Fatalf("config.toml after the second start = %q, %v", b, err)
	}
}
