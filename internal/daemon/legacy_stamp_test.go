package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// oldConfig is the fresh-install config as a pre-v3 install would have it.
var oldConfig = strings.Replace(string(config.DefaultTOML()), "schema_version = 3", "schema_version = 2", 1)

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

// A kill -9 after the legacy workspace was emptied and removed but before schema_version = 3 was saved leaves
// an old schema_version and no workspace. The next start must stamp it: otherwise the install stays "legacy"
// for good, and any directory later created at <install>/workspace is moved away as if it were the old layout.
func TestRunStampsSchemaVersionAfterMigrationCrash(t *testing.T) {
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
	if v, err := config.SchemaVersionOf(cfgPath); err != nil || v != install.LayoutSchemaVersion {
		t.Fatalf("schema_version = %d, %v; want %d", v, err, install.LayoutSchemaVersion)
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
}
