package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile/atomicfiletest"
)

func TestAtomicSaveFailurePoints(t *testing.T) {
	// Every step of a save (atomicfiletest names them); "syncdir 1" is the sync before the rename, "syncdir 2"
	// the one after it.
	before := []string{"open tmp", "chmod tmp", "write tmp", "sync tmp", "close tmp", "open bak", "chmod bak",
		"write bak", "sync bak", "close bak", "syncdir 1", "rename"}
	for _, step := range append(before, "syncdir 2", "") {
		t.Run(strings.ReplaceAll(step, " ", "_"), func(t *testing.T) {
			path := writeConfig(t, commentedConfig)
			fsys := &atomicfiletest.FaultFS{}
			m, err := openWith(path, nil, nil, nil, fsys, false)
			if err != nil {
				t.Fatal(err)
			}
			fsys.Fail = step
			_, err = m.Set(t.Context(), "gateway.port", json.RawMessage(`9000`), nil)
			text := readFile(t, path)
			entries, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Fatalf("temp file left behind: %s", e.Name())
				}
			}
			if step == "syncdir 2" || step == "" {
				if n := countPrefix(fsys.Steps(), "syncdir "); n != 2 {
					t.Fatalf("%d directory syncs, want one before and one after the rename", n)
				}
				if err != nil || m.Current().Gateway.Port != 9000 || !strings.Contains(text, "port = 9000") {
					t.Fatalf("err %v, port %d, file:\n%s", err, m.Current().Gateway.Port, text)
				}
				bak := readFile(t, path+".bak")
				if bak != commentedConfig {
					t.Fatalf("bak:\n%s", bak)
				}
				return
			}
			if !errors.Is(err, atomicfiletest.ErrInjected) {
				t.Fatalf("err = %v", err)
			}
			if text != commentedConfig || m.Current().Gateway.Port != 42617 || m.Generation() != 1 {
				t.Fatalf("changed after failure at %s: port %d gen %d file:\n%s", step, m.Current().Gateway.Port, m.Generation(), text)
			}
		})
	}
}

func TestEnsureDefaultRefusesToClobberRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	var wg sync.WaitGroup
	created := make([]bool, 8)
	for i := range created {
		wg.Go(func() {
			c, err := EnsureDefault(path)
			if err != nil {
				t.Error(err)
			}
			created[i] = c
		})
	}
	wg.Wait()
	n := 0
	for _, c := range created {
		if c {
			n++
		}
	}
	if n != 1 || readFile(t, path) != string(DefaultTOML()) {
		t.Fatalf("created %d times", n)
	}
}

// A temp file a save left behind (process killed before the rename) is found by RemoveStaleTemps; other files
// are not (atomicfile's tests cover the naming in detail).
func TestRemoveStaleTemps(t *testing.T) {
	path := writeConfig(t, commentedConfig)
	fsys := &atomicfiletest.FaultFS{Fail: "rename"}
	if err := atomicSave(fsys, nil, path, []byte("x")); !errors.Is(err, atomicfiletest.ErrInjected) {
		t.Fatal(err)
	}
	if len(fsys.Temps()) != 1 {
		t.Fatalf("temps %q", fsys.Temps())
	}
	stale := fsys.Temps()[0]
	// The failed save cleaned up; a killed process would not have: put the temp back as it was.
	if err := os.WriteFile(stale, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStaleTemps(path)
	if err != nil || len(removed) != 1 || removed[0] != stale {
		t.Fatalf("removed %v (%v), want [%s]", removed, err, stale)
	}
	if readFile(t, path) != commentedConfig || readFile(t, path+".bak") != commentedConfig {
		t.Fatal("config or its backup removed")
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// A config.toml.bak left with loose permissions by an older tool is tightened before it receives secrets.
func TestBackupIsPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("schema_version = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".bak", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicSave(atomicfile.OS{}, nil, path, []byte("schema_version = 3\n# new\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path + ".bak")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf(".bak mode %o, want 600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(path + ".bak"); string(b) != "schema_version = 3\n" {
		t.Fatalf(".bak holds %q, want the previous file", b)
	}
}
