package install

import (
	"os"
	"path/filepath"
	"testing"
)

// A kill -9 between the renames of devices.db and its -wal leaves the database in data/ and the -wal in the
// legacy workspace. The next start must reunite them: a WAL sent elsewhere loses every transaction it holds.
// Both orders of the interrupted group move are covered.
func TestMigrateLegacyResumesSplitDevicesDB(t *testing.T) {
	for _, movedFirst := range []string{"devices.db", "devices.db-wal"} {
		t.Run(movedFirst+" already moved", func(t *testing.T) {
			root := t.TempDir()
			l := legacyInstall(t, root)
			ws := l.LegacyDir()
			put(t, filepath.Join(ws, "AGENTS.md"), "be nice\n", 0o644)
			files := map[string]string{"devices.db": "devices", "devices.db-wal": "devices wal", "devices.db-shm": "shm"}
			for name, content := range files {
				dir := ws
				if name == movedFirst {
					dir = l.DataDir
				}
				put(t, filepath.Join(dir, name), content, 0o600)
			}

			r, err := MigrateLegacy(l, 2, legacyNow)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Complete() {
				t.Fatalf("resume not complete: %+v", r)
			}
			for name, content := range files {
				if b, err := os.ReadFile(filepath.Join(l.DataDir, name)); err != nil || string(b) != content {
					t.Errorf("data/%s = %q, %v; want %q", name, b, err, content)
				}
				if p := filepath.Join(l.AgentWorkspace("default"), name); exists(p) {
					t.Errorf("%s split from its database into %s", name, p)
				}
			}
		})
	}
}

