package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// faultFS wraps the real filesystem and fails the step named fail (counted across a save).
type faultFS struct {
	osFS
	fail     string
	dirSyncs int
}

var errInjected = errors.New("injected failure")

func (f *faultFS) step(name string) error {
	if f.fail == name {
		return errInjected
	}
	return nil
}

func kind(name string) string {
	switch {
	case strings.Contains(filepath.Base(name), ".tmp-"):
		return "tmp"
	case strings.HasSuffix(name, ".bak"):
		return "bak"
	}
	return "config"
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	if err := f.step("open " + kind(name)); err != nil {
		return nil, err
	}
	fh, err := f.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{file: fh, fs: f, kind: kind(name)}, nil
}

func (f *faultFS) ReadFile(name string) ([]byte, error) {
	if err := f.step("read " + kind(name)); err != nil {
		return nil, err
	}
	return f.osFS.ReadFile(name)
}

func (f *faultFS) Rename(o, n string) error {
	if err := f.step("rename"); err != nil {
		return err
	}
	return f.osFS.Rename(o, n)
}

func (f *faultFS) SyncDir(dir string) error {
	f.dirSyncs++
	if f.dirSyncs == 1 {
		if err := f.step("syncdir before"); err != nil {
			return err
		}
	} else if err := f.step("syncdir after"); err != nil {
		return err
	}
	return f.osFS.SyncDir(dir)
}

type faultFile struct {
	file
	fs   *faultFS
	kind string
}

func (f *faultFile) Write(b []byte) (int, error) {
	if err := f.fs.step("write " + f.kind); err != nil {
		return 0, err
	}
	return f.file.Write(b)
}

func (f *faultFile) Sync() error {
	if err := f.fs.step("sync " + f.kind); err != nil {
		return err
	}
	return f.file.Sync()
}

func (f *faultFile) Close() error {
	err := f.file.Close()
	if ferr := f.fs.step("close " + f.kind); ferr != nil {
		return ferr
	}
	return err
}

func TestAtomicSaveFailurePoints(t *testing.T) {
	before := []string{"open tmp", "write tmp", "sync tmp", "close tmp", "open bak", "write bak", "sync bak", "close bak",
		"syncdir before", "rename"}
	for _, step := range append(before, "syncdir after", "") {
		t.Run(strings.ReplaceAll(step, " ", "_"), func(t *testing.T) {
			path := writeConfig(t, commentedConfig)
			fsys := &faultFS{}
			m, err := openWith(path, nil, nil, nil, fsys)
			if err != nil {
				t.Fatal(err)
			}
			fsys.fail = step
			_, err = m.Set(t.Context(), "gateway.port", json.RawMessage(`9000`), nil)
			text := readFile(t, path)
			entries, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Fatalf("temp file left behind: %s", e.Name())
				}
			}
			if step == "syncdir after" || step == "" {
				if err != nil || m.Current().Gateway.Port != 9000 || !strings.Contains(text, "port = 9000") {
					t.Fatalf("err %v, port %d, file:\n%s", err, m.Current().Gateway.Port, text)
				}
				bak := readFile(t, path+".bak")
				if bak != commentedConfig {
					t.Fatalf("bak:\n%s", bak)
				}
				return
			}
			if !errors.Is(err, errInjected) {
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

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	keep := []string{path, filepath.Join(dir, "config.toml.bak"), filepath.Join(dir, ".other.tmp-1")}
	stale := []string{filepath.Join(dir, ".config.toml.tmp-0123abcd"), filepath.Join(dir, ".config.toml.tmp-ffff")}
	for _, p := range append(append([]string{}, keep...), stale...) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStaleTemps(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(stale) {
		t.Fatalf("removed %v, want %v", removed, stale)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
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
	if err := atomicSave(osFS{}, nil, path, []byte("schema_version = 3\n# new\n")); err != nil {
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
