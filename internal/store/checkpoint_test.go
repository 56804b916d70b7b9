package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A long reader keeps SQLite from restarting the log, so commits grow the -wal far past the bound; once the
// reader is gone, one checkpoint pass brings it back under the bound even though no write follows (an idle
// daemon), and every committed row is still there.
func TestCheckpointPassTruncatesWALAfterALongReader(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "sessions.db")
	s, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Unix(1_700_000_000, 0)
	if _, _, err := s.EnsureSession(ctx, "rpc_wal", "default", "", at); err != nil {
		t.Fatal(err)
	}
	reader, err := s.d.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRowContext(ctx, "SELECT count(*) FROM sessions").Scan(&n); err != nil { // takes the snapshot
		t.Fatal(err)
	}
	chunk := strings.Repeat("w", 64<<10)
	const rows = 200 // 12.5 MiB of content, past WALSizeLimit
	for range rows {
		if _, err := s.Append(ctx, "rpc_wal", "user", chunk, at); err != nil {
			t.Fatal(err)
		}
	}
	grown := walSize(t, p)
	if grown <= WALSizeLimit {
		t.Fatalf("with a reader held the WAL is only %d bytes: the test would prove nothing", grown)
	}
	held, err := CheckpointOpen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp := find(held, p); cp == nil || !cp.Busy || cp.WALAfter <= WALSizeLimit {
		t.Fatalf("checkpoint under a held reader: %+v; want it attempted, busy, and the WAL still large", cp)
	}
	if err := reader.Rollback(); err != nil {
		t.Fatal(err)
	}
	done, err := CheckpointOpen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp := find(done, p)
	if cp == nil || cp.Busy {
		t.Fatalf("checkpoint after the reader ended: %+v; want it done and not busy", cp)
	}
	if got := walSize(t, p); got > WALSizeLimit || got != 0 {
		t.Fatalf("-wal is %d bytes after the pass (grown to %d), want 0 (truncated) and at most %d", got, grown, WALSizeLimit)
	}
	if err := s.d.r.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE session_key = 'rpc_wal'").Scan(&n); err != nil || n != rows {
		t.Fatalf("after the checkpoint %d rows (err %v), want %d", n, err, rows)
	}
	// A pass with nothing to do touches nothing.
	again, err := CheckpointOpen(ctx)
	if err != nil || find(again, p) != nil {
		t.Fatalf("second pass: %+v, %v; want nothing done on an empty WAL", again, err)
	}
}

// A database closed before the pass is not checkpointed (nor reopened).
func TestCheckpointPassSkipsClosedDatabases(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "sessions.db")
	s, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cps, err := CheckpointOpen(ctx)
	if err != nil || find(cps, p) != nil {
		t.Fatalf("pass after close: %+v, %v", cps, err)
	}
}

func find(cps []Checkpoint, p string) *Checkpoint {
	for i := range cps {
		if cps[i].Path == p {
			return &cps[i]
		}
	}
	return nil
}
