package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The bundled SQLite is 3.51.3 or newer: older releases have the WAL-reset bug that can corrupt a database
// when a checkpoint and a writer race at the log's restart.
func TestBundledSQLiteHasTheWALResetFix(t *testing.T) {
	s, err := OpenChat(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v string
	if err := s.d.r.QueryRowContext(t.Context(), "SELECT sqlite_version()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if !versionAtLeast(v, 3, 51, 3) {
		t.Fatalf("bundled SQLite %s, want 3.51.3 or newer: older releases have the WAL-reset bug (a checkpoint racing a writer at the restart of the -wal can corrupt the database); upgrade modernc.org/sqlite", v)
	}
	t.Logf("SQLite %s", v)
}

func versionAtLeast(v string, want ...int) bool {
	parts := strings.Split(v, ".")
	for i, w := range want {
		n := 0
		if i < len(parts) {
			n, _ = strconv.Atoi(parts[i])
		}
		if n != w {
			return n > w
		}
	}
	return true
}

// A transaction far larger than the WAL bound grows the -wal file while it commits, but the checkpoints that
// follow cut it back to WALSizeLimit: no -wal keeps the size of the largest write for the daemon's life.
func TestWALIsCutBackAfterALargeWrite(t *testing.T) {
	if !strings.Contains(dsnPragmas, "journal_size_limit("+strconv.Itoa(WALSizeLimit)+")") {
		t.Fatalf("dsnPragmas %q does not bound the WAL at WALSizeLimit (%d)", dsnPragmas, WALSizeLimit)
	}
	p := filepath.Join(t.TempDir(), "sessions.db")
	s, err := OpenChat(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, _, err := s.EnsureSession(ctx, "rpc_big", "default", "", time.Unix(1_700_000_000, 0)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	if err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		for range 24 { // 24 MiB in one commit, three times the bound
			if _, err := tx.ExecContext(ctx, "INSERT INTO sessions (session_key, role, content, created_at) VALUES ('rpc_big', 'user', ?, '2026-01-01T00:00:00Z')", big); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	peak := walSize(t, p)
	if peak <= WALSizeLimit {
		t.Fatalf("the large commit left a %d-byte WAL: the test would prove nothing", peak)
	}
	for i := range 2000 { // small commits: the auto-checkpoints complete and restart the log
		if _, err := s.Append(ctx, "rpc_big", "user", "small "+strconv.Itoa(i), time.Unix(1_700_000_000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if got := walSize(t, p); got > WALSizeLimit {
		t.Fatalf("-wal is %d bytes after the checkpoints (peak %d), want at most %d", got, peak, WALSizeLimit)
	}
}

func walSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
