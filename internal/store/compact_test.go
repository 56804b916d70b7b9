package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

// fillAndThin writes rows to a chat database at p and deletes most of them, so the file is mostly free pages;
// it returns how many rows remain.
func fillAndThin(t *testing.T, p string) int {
	t.Helper()
	ctx := context.Background()
	s, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Unix(1_700_000_000, 0)
	if _, _, err := s.EnsureSession(ctx, "rpc_c", "default", "", at); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("c", 16<<10)
	for range 300 {
		if _, err := s.Append(ctx, "rpc_c", "user", chunk, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.d.w.ExecContext(ctx, "DELETE FROM sessions WHERE id % 10 != 0"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.d.r.QueryRowContext(ctx, "SELECT count(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sessionRows(t *testing.T, p string) int {
	t.Helper()
	c, err := openExisting(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCompactGivesBackFreePagesAndKeepsEveryRow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sessions.db")
	rows := fillAndThin(t, p)
	// A copy a cut compaction left behind is removed, not mistaken for the result.
	if err := os.WriteFile(p+CompactSuffix, []byte("half a copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Compact(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Before.FreePages == 0 {
		t.Fatalf("before: %+v: no free pages, the test would prove nothing", res.Before)
	}
	if res.After.FreePages != 0 || res.After.FileBytes >= res.Before.FileBytes {
		t.Fatalf("after %+v, before %+v: want no free pages and a smaller file", res.After, res.Before)
	}
	if got := sessionRows(t, p); got != rows {
		t.Fatalf("%d rows after compaction, want %d", got, rows)
	}
	if problems, err := IntegrityCheck(context.Background(), p); err != nil || len(problems) > 0 {
		t.Fatalf("integrity after compaction: %v %v", problems, err)
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		if _, err := os.Lstat(p + CompactSuffix + s); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s%s%s left behind (err %v)", p, CompactSuffix, s, err)
		}
	}
	// The compacted file opens as a store again and takes writes.
	s, err := OpenChat(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), "rpc_c", "user", "after", time.Unix(1_700_000_001, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// A database this process has open is never renamed under its connections.
func TestCompactRefusesALiveDatabase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sessions.db")
	s, err := OpenChat(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Compact(context.Background(), p); !errors.Is(err, dbfile.ErrLive) {
		t.Fatalf("compact of an open database: %v, want dbfile.ErrLive", err)
	}
	if _, err := os.Lstat(p + CompactSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a copy was started: %v", err)
	}
}

// A symlink where the temporary copy goes is not followed or removed.
func TestCompactRefusesASymlinkedTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sessions.db")
	fillAndThin(t, p)
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p+CompactSuffix); err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(context.Background(), p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("compact with a symlinked temp: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the symlink's target was changed: %q", b)
	}
}
