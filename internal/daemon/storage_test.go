package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// budgetDir is a data dir with a 4000-byte sessions.db (never prunable), a live 100-byte runtime log and three
// rotated logs of 1000, 2000 and 3000 bytes (oldest first), and a symlink named like a rotated log that points
// outside the data dir.
func budgetDir(t *testing.T) (dataDir, trace, outside string) {
	t.Helper()
	root := t.TempDir()
	dataDir = filepath.Join(root, "data")
	write := func(p string, n int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dataDir, "sessions", "sessions.db"), 4000)
	trace = filepath.Join(dataDir, "state", "runtime-trace.jsonl")
	write(trace, 100)
	write(filepath.Join(dataDir, "state", "runtime-trace.20260101T000000.000Z.jsonl"), 1000)
	write(filepath.Join(dataDir, "state", "runtime-trace.20260102T000000.000Z.jsonl"), 2000)
	write(filepath.Join(dataDir, "state", "runtime-trace.20260103T000000.000Z.jsonl"), 3000)
	outside = filepath.Join(root, "precious")
	write(outside, 50000)
	if err := os.Symlink(outside, filepath.Join(dataDir, "state", "runtime-trace.20250101T000000.000Z.jsonl")); err != nil {
		t.Fatal(err)
	}
	return dataDir, trace, outside
}

func TestPruneToBudgetDeletesOldestRotatedLogsFirstAndRecordsIt(t *testing.T) {
	dataDir, trace, outside := budgetDir(t)
	var got []store.Prune
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	// 10100 bytes; a budget of 7500 needs the two oldest rotated files gone (3000 bytes), not the newest.
	usage, err := pruneToBudget(dataDir, trace, 7500, func(p store.Prune) { got = append(got, p) }, now)
	if err != nil {
		t.Fatal(err)
	}
	if usage != 7100 {
		t.Fatalf("usage after the prune %d, want 7100", usage)
	}
	state := filepath.Join(dataDir, "state")
	for name, want := range map[string]bool{
		"runtime-trace.20260101T000000.000Z.jsonl": false, "runtime-trace.20260102T000000.000Z.jsonl": false,
		"runtime-trace.20260103T000000.000Z.jsonl": true, "runtime-trace.jsonl": true,
		"runtime-trace.20250101T000000.000Z.jsonl": true, // a symlink: not a file the log wrote
	} {
		if _, err := os.Lstat(filepath.Join(state, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
	if fi, err := os.Stat(outside); err != nil || fi.Size() != 50000 {
		t.Fatalf("the symlink's target was touched: %v", err)
	}
	if len(got) != 1 || got[0].Store != "logs" || got[0].Rows != 2 || got[0].Bytes != 3000 ||
		!strings.Contains(got[0].Reason, "storage.max_disk_bytes = 7500") || !got[0].At.Equal(now) {
		t.Fatalf("prunes recorded: %+v", got)
	}
}

// Over a budget that only unprunable data exceeds, every rotated log goes, nothing else does, and the keeper
// warns once (not at every pass) until the usage is back under the budget.
func TestBudgetOverWithOnlyUnprunableDataWarnsAndDeletesNothingElse(t *testing.T) {
	dataDir, trace, _ := budgetDir(t)
	var logBuf bytes.Buffer
	cfg := &config.Config{}
	cfg.Storage.MaxDiskBytes = 1000
	var prunes []store.Prune
	k := &storageKeeper{o: keeperOptions{DataDir: dataDir, TracePath: trace, Config: func() *config.Config { return cfg },
		OnPrune: func(p store.Prune) { prunes = append(prunes, p) }, Now: time.Now,
		Log: slog.New(slog.NewTextHandler(&logBuf, nil))}}
	k.budgetPass()
	k.budgetPass()
	if n := strings.Count(logBuf.String(), "over its disk budget"); n != 1 || !k.over {
		t.Fatalf("%d warnings (over %v), want 1:\n%s", n, k.over, logBuf.String())
	}
	if len(prunes) != 1 || prunes[0].Rows != 3 || prunes[0].Bytes != 6000 {
		t.Fatalf("prunes: %+v; want one of the three rotated files", prunes)
	}
	for _, p := range []string{filepath.Join(dataDir, "sessions", "sessions.db"), trace} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s was deleted for the budget: %v", p, err)
		}
	}
	cfg.Storage.MaxDiskBytes = 0 // a reload that turns the budget off clears the state
	k.budgetPass()
	if k.over {
		t.Fatal("still over with no budget")
	}
}
