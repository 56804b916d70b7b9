package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
)

// openMemory opens the memory backend [memory] names. A store that cannot be opened (a PostgreSQL server that
// is down, a damaged brain.db) does not stop the daemon: turns run without memory and memory/* answers that
// the subsystem is not available until a config change (or a later retry) opens it. A config change that names
// another backend opens it at once (the Manager would on next use anyway), so the log says how it went.
func openMemory(ctx context.Context, layout install.Layout, cfg func() *config.Config, onChange func(func(*config.Config)),
	now func() time.Time, log *slog.Logger) *memory.Manager {
	m, err := memory.Open(ctx, memory.Options{
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
