package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/backup"
)

// A restore whose content would expand past the archive's size times MaxRatio (a 1 GiB file declared in an
// archive of a few KB), or past the free space of the target's filesystem, is refused with ErrNoRoom before
// anything is written: no target, no staging directory.
func TestRestoreBoundsExpansion(t *testing.T) {
	t.Parallel()
	l, _ := liveInstall(t)
	good := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := backup.Create(context.Background(), backup.CreateOptions{Layout: l, Out: good, Now: now}); err != nil {
		t.Fatal(err)
	}
	bomb := editManifest(t, good, func(m *backup.Manifest) {
		m.Entries = append(m.Entries, backup.Entry{Path: "data/big.bin", Size: 1 << 30, SHA256: strings.Repeat("0", 64), Kind: "file", Mode: 0o600})
	})
	free := func(free int64) func(string) (int64, error) {
		return func(string) (int64, error) { return free, nil }
	}
	for _, tc := range []struct {
		name    string
		archive string
		free    func(string) (int64, error)
		msg     string
	}{
		{"ratio", bomb, nil, "times their size"},
		{"free space", good, free(1 << 20), "free"},
		{"free space, ratio unknown", bomb, free(512 << 20), "times their size"},
	} {
		parent := t.TempDir()
		target := layoutAt(filepath.Join(parent, "dst"))
		_, err := backup.Restore(context.Background(), backup.RestoreOptions{Archive: tc.archive, Layout: target, Now: now, FreeSpace: tc.free})
		if !errors.Is(err, backup.ErrNoRoom) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrNoRoom saying %q", tc.name, err, tc.msg)
		}
		if left, _ := os.ReadDir(parent); len(left) != 0 {
			t.Errorf("%s: the refused restore left %v in %s", tc.name, left, parent)
		}
	}
	// The good archive fits where there is room.
	target := layoutAt(filepath.Join(t.TempDir(), "dst"))
	if _, err := backup.Restore(context.Background(), backup.RestoreOptions{Archive: good, Layout: target, Now: now, FreeSpace: free(1 << 40)}); err != nil {
		t.Fatalf("restore with room: %v", err)
	}
}
