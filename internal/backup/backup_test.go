package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/backup"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func layoutAt(root string) install.Layout {
	return install.Layout{Root: root, DataDir: filepath.Join(root, "data")}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// liveInstall is an install whose sessions.db is held open by a writer (as a running daemon holds it) with
// commits still in its WAL, a cost ledger whose last line is half written, a key and a config.
func liveInstall(t *testing.T) (install.Layout, *store.ChatStore) {
	t.Helper()
	l := layoutAt(filepath.Join(t.TempDir(), "src"))
	write(t, l.ConfigPath(), "schema_version = 3\n")
	write(t, l.SecretKeyPath(), strings.Repeat("ab", 32))
	write(t, filepath.Join(l.StateDir(), "costs.jsonl"), `{"id":"1"}`+"\n"+`{"id":"2"}`+"\n"+`{"id":"3","usa`)
	write(t, filepath.Join(l.Root, "agents", "default", "workspace", "notes.txt"), "hello")
	chat, err := store.OpenChat(context.Background(), filepath.Join(l.SessionsDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chat.Close() })
	for i := range 25 {
		if _, err := chat.Append(context.Background(), "s1", "user", fmt.Sprintf("message %d", i), now); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(l.Root, "link")); err != nil {
		t.Fatal(err)
	}
	return l, chat
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	l, _ := liveInstall(t)
	if fi, err := os.Stat(filepath.Join(l.SessionsDir(), "sessions.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the source should have commits in its WAL: %v", err)
	}
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	var phases []string
	m, err := backup.Create(context.Background(), backup.CreateOptions{Layout: l, Out: out, Version: "9.9.9", Now: now,
		ConfigSchemaVersion: 3, Progress: func(phase string, done, total int64) {
			if len(phases) == 0 || phases[len(phases)-1] != phase {
				phases = append(phases, phase)
			}
			if done > total {
				t.Errorf("progress %d of %d", done, total)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(phases) != "[snapshot archive]" {
		t.Fatalf("phases %v", phases)
	}
	kinds := map[string]string{}
	for _, e := range m.Entries {
		kinds[e.Path] = e.Kind
	}
	want := map[string]string{"config.toml": "file", ".secret_key": "file", "data/state/costs.jsonl": "jsonl",
		"data/sessions/sessions.db": "sqlite", "agents/default/workspace/notes.txt": "file"}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("%s: kind %q, want %q (entries %v)", p, kinds[p], k, kinds)
		}
	}
	for p := range kinds {
		if strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") || p == "link" {
			t.Errorf("archived %s", p)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".zeroclaw-backup-*")); len(left) != 0 {
		t.Fatalf("staging left behind: %v", left)
	}

	dst := layoutAt(filepath.Join(t.TempDir(), "dst"))
	res, err := backup.Restore(context.Background(), backup.RestoreOptions{Archive: out, Layout: dst, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if res.MovedAside != "" || len(res.Manifest.Entries) != len(m.Entries) {
		t.Fatalf("result %+v", res)
	}
	chat, err := store.OpenChat(context.Background(), filepath.Join(dst.SessionsDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer chat.Close()
	msgs, err := chat.All(context.Background(), "s1")
	if err != nil || len(msgs) != 25 || msgs[24].Content != "message 24" {
		t.Fatalf("restored messages: %d, %v", len(msgs), err)
	}
	costs, _ := os.ReadFile(filepath.Join(dst.StateDir(), "costs.jsonl"))
	if string(costs) != `{"id":"1"}`+"\n"+`{"id":"2"}`+"\n" {
		t.Fatalf("costs.jsonl not cut at the last line: %q", costs)
	}
	key, _ := os.ReadFile(dst.SecretKeyPath())
	if string(key) != strings.Repeat("ab", 32) {
		t.Fatal("key differs")
	}
	for _, p := range []string{dst.SecretKeyPath(), dst.ConfigPath(), filepath.Join(dst.SessionsDir(), "sessions.db")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
}

// rewrite copies the archive member by member through edit, which may change a header or the content.
func rewrite(t *testing.T, archive string, edit func(h *tar.Header, body []byte) (*tar.Header, []byte)) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		body := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, body); err != nil {
			t.Fatal(err)
		}
		nh, nb := edit(h, body)
		if nh == nil {
			continue
		}
		if err := tw.WriteHeader(nh); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(nb); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	out := filepath.Join(t.TempDir(), "edited.tar.gz")
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// editManifest rewrites the manifest with fn and adds extra members after the others.
func editManifest(t *testing.T, archive string, fn func(m *backup.Manifest)) string {
	return rewrite(t, archive, func(h *tar.Header, body []byte) (*tar.Header, []byte) {
		if h.Name != backup.ManifestName {
			return h, body
		}
		var m backup.Manifest
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		fn(&m)
		nb, _ := json.Marshal(m)
		h.Size = int64(len(nb))
		return h, nb
	})
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Every tampered archive is refused before anything is written: the target does not appear.
func TestRestoreRefusesTamperedArchives(t *testing.T) {
	t.Parallel()
	l, _ := liveInstall(t)
	good := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := backup.Create(context.Background(), backup.CreateOptions{Layout: l, Out: good, Now: now}); err != nil {
		t.Fatal(err)
	}
	evil := []byte("evil")
	cases := map[string]string{
		"flipped byte": rewrite(t, good, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
			if h.Name == "config.toml" {
				b = bytes.Replace(b, []byte("3"), []byte("4"), 1)
			}
			return h, b
		}),
		"member missing": rewrite(t, good, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
			if h.Name == ".secret_key" {
				return nil, nil
			}
			return h, b
		}),
		"traversal": editManifest(t, good, func(m *backup.Manifest) {
			m.Entries = append(m.Entries, backup.Entry{Path: "../escaped", Size: 4, SHA256: sum(evil), Kind: "file", Mode: 0o600})
		}),
		"absolute": editManifest(t, good, func(m *backup.Manifest) {
			m.Entries = append(m.Entries, backup.Entry{Path: "/tmp/escaped", Size: 4, SHA256: sum(evil), Kind: "file", Mode: 0o600})
		}),
		"too big": editManifest(t, good, func(m *backup.Manifest) {
			m.Entries[0].Size = 1 << 50
		}),
		"symlink member": rewrite(t, good, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
			if h.Name == "config.toml" {
				return &tar.Header{Typeflag: tar.TypeSymlink, Name: "config.toml", Linkname: "/etc/passwd"}, nil
			}
			return h, b
		}),
		"not in manifest": rewrite(t, good, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
			if h.Name == "config.toml" {
				h.Name = "agents/x/../../../escaped"
			}
			return h, b
		}),
		"manifest not first": rewrite(t, good, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
			if h.Name == backup.ManifestName {
				h.Name = "other.json"
			}
			return h, b
		}),
	}
	for name, archive := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dst := layoutAt(filepath.Join(parent, "dst"))
			_, err := backup.Restore(context.Background(), backup.RestoreOptions{Archive: archive, Layout: dst, Now: now})
			if !errors.Is(err, backup.ErrInvalidArchive) {
				t.Fatalf("err = %v, want ErrInvalidArchive", err)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("restore wrote %v", entries)
			}
			if _, err := os.Lstat(filepath.Join(parent, "escaped")); err == nil {
				t.Fatal("a file escaped the target")
			}
		})
	}
}

func TestRestoreOverExistingInstall(t *testing.T) {
	t.Parallel()
	l, _ := liveInstall(t)
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := backup.Create(context.Background(), backup.CreateOptions{Layout: l, Out: archive, Now: now}); err != nil {
		t.Fatal(err)
	}
	dst := layoutAt(filepath.Join(t.TempDir(), "dst"))
	write(t, dst.ConfigPath(), "# the old install\n")
	_, err := backup.Restore(context.Background(), backup.RestoreOptions{Archive: archive, Layout: dst, Now: now})
	if !errors.Is(err, backup.ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
	// A daemon on the target: refused even with --force.
	lock, err := install.LockInstall(dst)
	if err != nil {
		t.Fatal(err)
	}
	_, err = backup.Restore(context.Background(), backup.RestoreOptions{Archive: archive, Layout: dst, Now: now, Force: true})
	if !errors.Is(err, backup.ErrDaemonRunning) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("err = %v, want ErrDaemonRunning naming the pid", err)
	}
	lock.Release()
	res, err := backup.Restore(context.Background(), backup.RestoreOptions{Archive: archive, Layout: dst, Now: now, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.MovedAside != dst.Root+".before-restore-20261130T120000" {
		t.Fatalf("moved aside to %q", res.MovedAside)
	}
	if old, _ := os.ReadFile(filepath.Join(res.MovedAside, "config.toml")); string(old) != "# the old install\n" {
		t.Fatalf("old install not kept: %q", old)
	}
	if cfg, _ := os.ReadFile(dst.ConfigPath()); string(cfg) != "schema_version = 3\n" {
		t.Fatalf("restored config %q", cfg)
	}
}

// The archive pass reports progress within a large file, not only after it: a multi-gigabyte database would
// otherwise hold the bar still for minutes.
func TestBackupProgressMovesWithinLargeFiles(t *testing.T) {
	t.Parallel()
	l, _ := liveInstall(t)
	big := filepath.Join(l.Root, "agents", "default", "workspace", "big.bin")
	if err := os.WriteFile(big, bytes.Repeat([]byte("z"), 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	var within, reports int
	var last int64
	m, err := backup.Create(context.Background(), backup.CreateOptions{Layout: l, Out: filepath.Join(t.TempDir(), "b.tar.gz"),
		Version: "9.9.9", Now: now, ConfigSchemaVersion: 3, Progress: func(phase string, done, total int64) {
			if phase != "archive" {
				return
			}
			reports++
			if done < last || done > total {
				t.Errorf("archive progress %d after %d, of %d", done, last, total)
			}
			last = done
			if done > 0 && done < 4<<20 {
				within++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if within < 2 || reports <= len(m.Entries) {
		t.Fatalf("archive progress: %d reports for %d files, %d before the big file was in", reports, len(m.Entries), within)
	}
}
