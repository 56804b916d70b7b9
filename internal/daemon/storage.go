package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// walCheckpointInterval is how often the storage keeper runs a checkpoint pass (store.CheckpointOpen) over the
// daemon's SQLite files: a WAL that grew past store.WALCheckpointAbove while a long reader held it is truncated
// within one interval of the reader's end, even when no write follows.
const walCheckpointInterval = 30 * time.Second

// storageKeeper runs the periodic storage passes of a running daemon. stop ends the loop and waits for it; it
// must be called before the stores close.
type storageKeeper struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func startStorageKeeper(ctx context.Context, clk clock.Clock, log *slog.Logger) *storageKeeper {
	k := &storageKeeper{done: make(chan struct{})}
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
