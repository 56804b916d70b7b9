package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// stores are the durable stores the daemon owns for its whole run.
type stores struct {
	chat    store.Chat // the session backend: *store.ChatStore (sessions.db) or *store.JSONLChat
	costs   *store.CostLedger
	cron    *store.CronStore   // data/cron/jobs.db, created by its first write only
	tasks   *store.TaskStore   // data/control_plane.db
	acp     *store.ACPStore    // nil when acp-sessions.db could not be opened: ACP sessions then live in memory
	devices *store.DeviceStore // data/devices.db; nil when it could not be opened
	closed  sync.Once
}

// openStores opens the session backend (openChat), and the other stores: the control plane, the cost ledger
// (data/state/costs.jsonl, created lazily on the first record), cron and ACP.
func openStores(ctx context.Context, layout install.Layout, cfg *config.Config, now time.Time, log *slog.Logger) (*stores, error) {
	chat, err := openChat(ctx, layout, cfg, now, log)
	if err != nil {
		return nil, err
	}
	// With the install lock held nothing runs yet: a session stored as running was cut by the end of a
	// previous process (kill -9, crash). Mark it idle, noting the interruption, instead of a stale turn_id.
	if n, err := chat.InterruptRunning(ctx); err != nil {
		log.Warn("sessions left running by a previous process not reset", "component", "store", "err", err)
	} else if n > 0 {
		log.Info("marked turns interrupted by the previous daemon's exit", "component", "store", "sessions", n)
	}
	tasks, err := store.OpenControlPlane(ctx, filepath.Join(layout.DataDir, "control_plane.db"))
	if err != nil {
		_ = chat.Close()
		return nil, fmt.Errorf("daemon: open control plane: %w", err)
	}
	st := &stores{
		chat:  chat,
		costs: store.OpenCostLedger(filepath.Join(layout.StateDir(), "costs.jsonl")),
		cron:  store.OpenCron(filepath.Join(layout.DataDir, "cron", "jobs.db")),
		tasks: tasks,
	}
	// A broken ACP store does not stop the daemon: ACP sessions then live in memory only and initialize tells
	// clients that session/load is unavailable (acp.md).
	if st.acp, err = store.OpenACP(ctx, filepath.Join(layout.SessionsDir(), "acp-sessions.db")); err != nil {
		log.Warn("acp session store unavailable: ACP sessions will not be durable", "component", "store", "err", err)
		st.acp = nil
	}
	st.devices = openDevices(ctx, layout, log)
	return st, nil
}

// close closes every store once; later calls do nothing.
func (s *stores) close(log *slog.Logger) {
	s.closed.Do(func() { s.closeAll(log) })
}

func (s *stores) closeAll(log *slog.Logger) {
	if err := s.cron.Close(); err != nil {
		log.Warn("closing cron store", "component", "store", "err", err)
	}
	if err := s.tasks.Close(); err != nil {
		log.Warn("closing control plane", "component", "store", "err", err)
	}
	if err := s.costs.Close(); err != nil {
		log.Warn("closing cost ledger", "component", "store", "err", err)
	}
	if err := s.chat.Close(); err != nil {
		log.Warn("closing chat store", "component", "store", "err", err)
	}
	if s.devices != nil {
		if err := s.devices.Close(); err != nil {
			log.Warn("closing device registry", "component", "store", "err", err)
		}
	}
	if s.acp != nil {
		if err := s.acp.Close(); err != nil {
			log.Warn("closing acp store", "component", "store", "err", err)
		}
	}
}

// openChat opens the session backend `[channels] session_backend` names (state.md §4). SQLite (sessions.db, the
// default) first imports the JSONL session files of data/sessions (stamped now; state.md §5) and carries over the
// metadata the JSONL backend kept for them, so switching back from JSONL keeps every session, its agent and its
// owner. JSONL reads and appends the files themselves and imports nothing.
func openChat(ctx context.Context, layout install.Layout, cfg *config.Config, now time.Time, log *slog.Logger) (store.Chat, error) {
	dir := layout.SessionsDir()
	if sessionBackend(cfg) == "jsonl" {
		chat, err := store.OpenJSONLChat(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("daemon: open jsonl session backend: %w", err)
		}
		return chat, nil
	}
	chat, err := store.OpenChat(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		return nil, fmt.Errorf("daemon: open chat store: %w", err)
	}
	// Legacy JSONL sessions move in once (state.md §5). A failed source stays on disk for the next start;
	// the daemon keeps serving what was imported.
	rep, err := chat.ImportJSONL(ctx, dir, now)
	if rep.Sessions+rep.Resumed > 0 {
		log.Info("imported legacy jsonl sessions", "component", "store", "sessions", rep.Sessions,
			"messages", rep.Messages, "resumed", rep.Resumed)
	}
	for _, f := range rep.Failed {
		log.Warn("legacy jsonl session not imported", "component", "store", "source", f.Source, "err", f.Err)
	}
	if err != nil && len(rep.Failed) == 0 {
		log.Warn("legacy jsonl import failed", "component", "store", "err", err)
	}
	if n, err := chat.AdoptJSONLMeta(ctx, dir); err != nil {
		log.Warn("jsonl session metadata not carried over", "component", "store", "err", err)
	} else if n > 0 {
		log.Info("carried over the jsonl backend's session metadata", "component", "store", "sessions", n)
	}
	return chat, nil
}

// sessionBackend is the session backend cfg selects: "jsonl", or "sqlite" for anything else (validation warns
// about an unknown value).
func sessionBackend(cfg *config.Config) string {
	if cfg.Channels.SessionBackend == "jsonl" {
		return "jsonl"
	}
	return "sqlite"
}
