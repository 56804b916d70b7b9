package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// prunesFile is the prune log under data/state: every prune of prunable data, one JSON record a line.
const prunesFile = "prunes.jsonl"

// prunesRecorder records each prune in the prune log and publishes it as a log event (system/prune).
func prunesRecorder(layout install.Layout, events *logs.Hub, log *slog.Logger) func(store.Prune) {
	pl := store.OpenPruneLog(filepath.Join(layout.StateDir(), prunesFile))
	return func(p store.Prune) {
		if err := pl.Append(p); err != nil {
			log.Warn("prune not recorded in the prune log", "component", "storage", "err", err)
		}
		events.Publish(logs.Entry{Category: logs.CategorySystem, Action: "prune", Outcome: logs.OutcomeSuccess,
			Message:  fmt.Sprintf("pruned %d %s (%s)", p.Rows, p.What, p.Reason),
			Zeroclaw: map[string]any{"store": p.Store, "agent_alias": p.Agent, "rows": p.Rows, "bytes": p.Bytes, "reason": p.Reason}})
	}
}

// openMemory opens the memory backend [memory] names. A store that cannot be opened (a PostgreSQL server that
// is down, a damaged brain.db) does not stop the daemon: turns run without memory and memory/* answers that
// the subsystem is not available until a config change (or a later retry) opens it. A config change that names
// another backend opens it at once (the Manager would on next use anyway), so the log says how it went.
func openMemory(ctx context.Context, layout install.Layout, cfg func() *config.Config, onChange func(func(*config.Config)),
	now func() time.Time, log *slog.Logger, onPrune func(store.Prune)) *memory.Manager {
	m, err := memory.Open(ctx, memory.Options{
		OnPrune: onPrune,
		DataDir: layout.DataDir,
		Config:  cfg,
		Now:     now,
		Logger:  log.With("component", "memory"),
		Workspace: func(c *config.Config, alias string) string {
			if p := c.Agents[alias].Workspace.Path; p != "" {
				return p
			}
			return filepath.Join(layout.Root, "agents", alias, "workspace")
		},
	})
	if err != nil && ctx.Err() != nil {
		return nil // the start is being cut by a signal: nothing to warn about
	}
	if err != nil {
		log.Warn("memory unavailable: agents run without memory", "component", "memory", "backend", cfg().Memory.Backend, "err", err)
		return nil
	}
	if onChange != nil {
		onChange(func(*config.Config) { go m.Refresh(ctx) })
	}
	return m
}

func closeMemory(m *memory.Manager, log *slog.Logger) {
	if err := m.Close(); err != nil {
		log.Warn("closing memory", "component", "memory", "err", err)
	}
}
