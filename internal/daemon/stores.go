package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/jsonl"
)

// stores are the durable stores the daemon owns for its whole run.
type stores struct {
	chat    store.Chat // the session backend: *store.ChatStore (sessions.db) or *jsonl.Chat
	costs   *store.CostLedger
	cron    cronStore          // data/cron/jobs.db, created by its first write only, or the shared backend's
	backend *backend           // [storage] backend: sqlite, or the shared PostgreSQL database
	tasks   *store.TaskStore   // data/control_plane.db
	acp     *store.ACPStore    // nil when acp-sessions.db could not be opened: ACP sessions then live in memory
	devices *store.DeviceStore // data/devices.db; nil when it could not be opened
	closed  sync.Once

	// The legacy JSONL import (state.md §5), prepared by openChat and run in the background once the daemon
	// listens (startImport); nil when there is nothing to import. stopImport cancels it, importWG waits for it.
	imp        *jsonl.Import
	stopImport context.CancelFunc
	importWG   sync.WaitGroup
}

// onImportSource, when set (tests), is called before each legacy JSONL source is imported.
var onImportSource func(source string)

// openStores opens the session backend (openChat), and the other stores: the control plane, the cost ledger
// (data/state/costs.jsonl, created lazily on the first record), cron and ACP.
func openStores(ctx context.Context, layout install.Layout, cfg *config.Config, log *slog.Logger) (*stores, error) {
	be, err := openBackend(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	chat, imp, err := openChat(ctx, layout, cfg, log)
	if err == nil && be.pool != nil && sessionBackend(cfg) != "jsonl" {
		// The shared backend holds chat sessions too: any daemon on the database answers for any session, a
		// running turn is owned by one (its lease), and sessions.db stays as it was (storage migrate copies it).
		_ = chat.Close()
		imp = nil
		chat, err = openSharedChat(ctx, be, log)
	}
	if err != nil {
		be.close()
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
		be.close()
		return nil, fmt.Errorf("daemon: open control plane: %w", err)
	}
	st := &stores{
		imp:     imp,
		chat:    chat,
		costs:   store.OpenCostLedger(filepath.Join(layout.StateDir(), "costs.jsonl")),
		cron:    store.OpenCron(filepath.Join(layout.DataDir, "cron", "jobs.db")),
		tasks:   tasks,
		backend: be,
	}
	if be.cron != nil {
		st.cron = be.cron
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
	// The import first: it writes the chat store. Cut between or inside sources, it resumes at the next start.
	s.cancelImport()
	s.importWG.Wait()
	if err := s.cron.Close(); err != nil {
		log.Warn("closing cron store", "component", "store", "err", err)
	}
	if err := s.tasks.Close(); err != nil {
		log.Warn("closing control plane", "component", "store", "err", err)
	}
	if err := s.costs.Close(); err != nil {
		log.Warn("closing cost ledger", "component", "store", "err", err)
	}
	if s.backend != nil && s.backend.stopChat != nil {
		s.backend.stopChat() // its recovery pass ends before the store closes
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
	s.backend.close()
}

// cronStore is the scheduler's store with its Close.
type cronStore interface {
	cron.Store
	Close() error
}

// cancelImport cuts a running legacy import short (the shutdown's drain): the calls waiting for its sessions go
// on instead of holding the drain. What it had not committed is imported at the next start.
func (s *stores) cancelImport() {
	if s.stopImport != nil {
		s.stopImport()
	}
}

// openChat opens the session backend `[channels] session_backend` names (state.md §4). SQLite (sessions.db, the
// default) also prepares the import of the JSONL session files of data/sessions (state.md §5), which startImport
// runs once the daemon listens: until it is done, calls on the sessions it imports wait. JSONL reads and appends
// the files themselves and imports nothing (imp is nil).
func openChat(ctx context.Context, layout install.Layout, cfg *config.Config, log *slog.Logger) (chat store.Chat, imp *jsonl.Import, err error) {
	dir := layout.SessionsDir()
	if sessionBackend(cfg) == "jsonl" {
		chat, err := jsonl.Open(ctx, dir)
		if err != nil {
			return nil, nil, fmt.Errorf("daemon: open jsonl session backend: %w", err)
		}
		return chat, nil, nil
	}
	db, err := store.OpenChat(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		return nil, nil, fmt.Errorf("daemon: open chat store: %w", err)
	}
	if imp, err = jsonl.PrepareImport(ctx, db, dir); err != nil {
		// Nothing was fenced: the daemon serves what sessions.db holds, the next start tries again.
		log.Warn("legacy jsonl import failed", "component", "store", "err", err)
		return db, nil, nil
	}
	return db, imp, nil
}

// startImport runs the import openChat prepared in the background, so that the socket serves while a large
// legacy history moves in (a call on one of the sessions it imports waits for it). Each source is its own
// transaction with its receipt, so a kill -9 at any point loses and duplicates nothing (state.md §5). Once the
// files are in, it carries over the metadata the JSONL backend kept for them, so switching back from JSONL keeps
// every session, its agent and its owner, and only then lets the waiting calls go on. The daemon serves what
// was imported when a source fails; the failed source stays on disk for the next start.
func (s *stores) startImport(ctx context.Context, layout install.Layout, now time.Time, log *slog.Logger) {
	chat, ok := s.chat.(*store.ChatStore)
	if s.imp == nil || !ok {
		return
	}
	imp := s.imp
	imp.OnSource = onImportSource
	ctx, s.stopImport = context.WithCancel(ctx)
	s.importWG.Add(1)
	go func() {
		defer s.importWG.Done()
		defer imp.Release()
		if imp.Sessions() > 0 {
			log.Info("importing legacy jsonl sessions in the background", "component", "store", "sessions", imp.Sessions())
		}
		importJSONL(ctx, chat, imp, layout.SessionsDir(), now, log)
	}()
}

// importJSONL runs imp and the metadata carry-over, and logs what they did.
func importJSONL(ctx context.Context, chat *store.ChatStore, imp *jsonl.Import, dir string, now time.Time, log *slog.Logger) {
	rep, err := imp.Run(ctx, now)
	if rep.Sessions+rep.Resumed > 0 {
		log.Info("imported legacy jsonl sessions", "component", "store", "sessions", rep.Sessions,
			"messages", rep.Messages, "resumed", rep.Resumed)
	}
	for _, sk := range rep.Skipped {
		log.Warn("legacy jsonl line not imported; the archived source keeps it", "component", "store",
			"source", sk.Source, "line", sk.Line, "reason", sk.Reason)
	}
	if rep.SkippedMore > 0 {
		log.Warn("more legacy jsonl lines not imported", "component", "store", "lines", rep.SkippedMore)
	}
	for _, f := range rep.Failed {
		log.Warn("legacy jsonl session not imported", "component", "store", "source", f.Source, "err", f.Err)
	}
	if err != nil && len(rep.Failed) == 0 {
		log.Warn("legacy jsonl import failed", "component", "store", "err", err)
	}
	if n, err := jsonl.AdoptMeta(ctx, chat, dir); err != nil {
		log.Warn("jsonl session metadata not carried over", "component", "store", "err", err)
	} else if n > 0 {
		log.Info("carried over the jsonl backend's session metadata", "component", "store", "sessions", n)
	}
}

// sessionBackend is the session backend cfg selects: "jsonl", or "sqlite" for anything else (validation warns
// about an unknown value).
func sessionBackend(cfg *config.Config) string {
	if cfg.Channels.SessionBackend == "jsonl" {
		return "jsonl"
	}
	return "sqlite"
}
