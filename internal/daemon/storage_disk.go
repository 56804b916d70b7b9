package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// walCheckpointInterval is how often the storage keeper runs a checkpoint pass (store.CheckpointOpen) over the
// daemon's SQLite files: a WAL that grew past store.WALCheckpointAbove while a long reader held it is truncated
// within one interval of the reader's end, even when no write follows.
const walCheckpointInterval = 30 * time.Second

// storageKeeper runs the periodic storage passes of a running daemon: the WAL checkpoint pass and the disk
// budget ([storage] max_disk_bytes, read from the live config at each pass, so a reload applies at the next
// one). stop ends the loop and waits for it; it must be called before the stores close.
type storageKeeper struct {
	o    keeperOptions
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	over bool // the last budget pass ended over the budget (only the loop goroutine touches it)
}

type keeperOptions struct {
	DataDir   string
	TracePath string // the runtime event log, whose rotated files the budget may delete
	Config    func() *config.Config
	OnPrune   func(store.Prune)
	Now       func() time.Time
	Log       *slog.Logger
}

func startStorageKeeper(ctx context.Context, clk clock.Clock, o keeperOptions) *storageKeeper {
	k := &storageKeeper{o: o, done: make(chan struct{})}
	log := o.Log
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		for {
			t := clk.NewTimer(walCheckpointInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-k.done:
				t.Stop()
				return
			case <-t.C:
			}
			checkpointPass(ctx, log)
			k.budgetPass()
		}
	}()
	return k
}

func (k *storageKeeper) stop() {
	k.once.Do(func() { close(k.done) })
	k.wg.Wait()
}

func checkpointPass(ctx context.Context, log *slog.Logger) {
	cps, err := store.CheckpointOpen(ctx)
	if err != nil && ctx.Err() == nil {
		log.Warn("WAL checkpoint failed", "component", "storage", "err", err)
	}
	for _, cp := range cps {
		log.Debug("WAL checkpoint", "component", "storage", "path", cp.Path, "wal_before", cp.WALBefore,
			"wal_after", cp.WALAfter, "busy", cp.Busy)
	}
}

// budgetPass enforces [storage] max_disk_bytes once and logs a warning when the data dir stays over it with
// nothing prunable left (once per crossing; doctor reports it for as long as it lasts).
func (k *storageKeeper) budgetPass() {
	budget := k.o.Config().Storage.MaxDiskBytes
	if budget <= 0 {
		k.over = false
		return
	}
	usage, err := pruneToBudget(k.o.DataDir, k.o.TracePath, budget, k.o.OnPrune, k.o.Now())
	if err != nil {
		k.o.Log.Warn("disk budget not enforced", "component", "storage", "err", err)
		return
	}
	over := usage > budget
	if over && !k.over {
		k.o.Log.Warn("the data dir is over its disk budget and nothing prunable is left: nothing else is deleted; raise storage.max_disk_bytes, run zeroclaw storage compact, or delete what you no longer need",
			"component", "storage", "usage_bytes", usage, "max_disk_bytes", budget)
	}
	k.over = over
}

// pruneToBudget deletes the runtime log's rotated files, oldest first, while the data dir takes more than
// budget bytes, and records what it deleted in one Prune. Only those files are prunable for the budget: the
// live log is already bounded by its own persistence setting; sessions, config, secrets, cron, memory and
// the cost ledger are never deleted for it (memory's auto-saved rows have their own cap, and deleting rows
// would not shrink a file without a compaction). It returns the usage left.
func pruneToBudget(dataDir, tracePath string, budget int64, onPrune func(store.Prune), now time.Time) (int64, error) {
	usage, err := store.DirBytes(dataDir)
	if err != nil || usage <= budget {
		return usage, err
	}
	start := usage
	var files int
	var freed int64
	for _, p := range logs.RotatedFiles(tracePath) {
		if usage <= budget {
			break
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue // gone meanwhile, or not a file the log wrote
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return usage, fmt.Errorf("daemon: disk budget: %w", err)
		}
		files++
		freed += fi.Size()
		usage -= fi.Size()
	}
	if files > 0 && onPrune != nil {
		onPrune(store.Prune{At: now, Store: "logs", What: "rotated log files (oldest first)",
			Rows: files, Bytes: freed, Reason: fmt.Sprintf("storage.max_disk_bytes = %d (the data dir took %d bytes)", budget, start)})
	}
	return usage, nil
}
