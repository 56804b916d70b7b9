package skills

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// The catalog lists workspace skills before the bundles', skips (with a warning) a bundle that leads out of
// shared/ when listing everything but refuses it when named, and archives a deleted skill with its clock.
func TestCatalogListReadWriteDelete(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	now := time.Unix(1_700_000_000, 0)
	c := NewCatalog(CatalogOptions{Config: func() *config.Config { return cfg }, InstallRoot: root, Now: func() time.Time { return now }})
	ws := filepath.Join(root, "agents", "default", "workspace", "skills", "local")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "SKILL.md"), []byte("---\ndescription: Local.\n---\nDo it.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fm := Frontmatter{Description: "Writes release notes."}
	if err := c.Write("team", "release-notes", fm, "1. Read the log.\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "outside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(root, "shared", "ops-skills")); err != nil {
		t.Fatal(err)
	}
	all, warnings, err := c.List("", "")
	if err != nil || len(all) != 2 || all[0].Bundle != WorkspaceBundle || all[0].Agent != "default" ||
		all[1].Bundle != "team" || all[1].Name != "release-notes" || len(warnings) != 1 {
		t.Fatalf("list: %+v %q %v", all, warnings, err)
	}
	if _, _, err := c.List("ops", ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("named bundle out of shared/: %v", err)
	}
	if only, _, err := c.List(WorkspaceBundle, "default"); err != nil || len(only) != 1 {
		t.Fatalf("workspace only: %+v %v", only, err)
	}
	if _, _, err := c.List(WorkspaceBundle, "nobody"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown agent: %v", err)
	}
	doc, err := c.Read("team", "release-notes")
	if err != nil || doc.Frontmatter.Name != "release-notes" {
		t.Fatalf("read: %+v %v", doc, err)
	}
	if err := c.Delete("team", "release-notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "shared", DeletedDir, "release-notes-1700000000")); err != nil {
		t.Fatalf("archive: %v", err)
	}
	if err := c.Delete("missing", "x"); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown bundle: %v", err)
	}
}
