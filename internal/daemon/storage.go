package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cronpg"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

// announceEvery is how often a daemon on a shared database records itself alive; peersWithin is how recently
// a peer must have done so to be listed.
const (
	announceEvery = 5 * time.Second
	peersWithin   = 30 * time.Second
)

// backend is the [storage] backend the daemon runs on (fixed at start): "sqlite", where every store is a file
// of this install, or "postgres.<alias>", a database shared with other daemons, where the cron jobs and runs
// live (cronpg) and each run is claimed by exactly one daemon (lease work slots), and the chat sessions
// (pgchat: a running turn owned by one daemon through its lease). The control plane, ACP sessions and the other
// stores stay in this install's SQLite files with either backend.
type backend struct {
	name   string
	pool   *pgdb.Pool   // nil for sqlite
	leases *lease.Store // nil for sqlite
	cron   *cronpg.Store

	stop     context.CancelFunc
	stopChat context.CancelFunc // ends the shared chat store's recovery; nil without it
	wg       sync.WaitGroup
	last     atomic.Pointer[api.StorageStatus] // refreshed with each announcement
}

// openBackend connects to the database [storage] backend names (the DSN is [storage.postgres.<alias>] db_url,
// a secret, as memory's PostgreSQL backend reads it), migrates the lease and cron schemas under the migration
// lock, and starts announcing this daemon to its peers. An unknown alias or an unreachable server stops the
// start with an error that names the key, never the URL.
func openBackend(ctx context.Context, cfg *config.Config, log *slog.Logger) (*backend, error) {
	kind, alias := cfg.Storage.StorageBackend()
	if kind == "sqlite" {
		return &backend{name: "sqlite"}, nil
	}
	b := &backend{name: "postgres." + alias}
	st, ok := cfg.Storage.Postgres[alias]
	if !ok {
		return nil, fmt.Errorf("daemon: storage.backend %q: no [storage.postgres.%s]", b.name, alias)
	}
	o := pgdb.Options{AppName: "zeroclaw"}
	if st.Schema != "" && st.Schema != "public" {
		o.Schema = st.Schema
	}
	pool, err := pgdb.Open(ctx, st.DBURL, o)
	if err != nil {
		return nil, fmt.Errorf("daemon: storage.backend %q: %w", b.name, err)
	}
	b.pool = pool
	if b.leases, err = lease.Open(ctx, pool, lease.NewHolderID()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("daemon: storage.backend %q: %w", b.name, err)
	}
	if b.cron, err = cronpg.Open(ctx, pool, b.leases); err != nil {
		pool.Close()
		return nil, fmt.Errorf("daemon: storage.backend %q: %w", b.name, err)
	}
	if err := b.leases.Announce(ctx, api.ServerVersion); err != nil {
		log.Warn("not announced to the other daemons", "component", "storage", "err", err)
	}
	b.refresh(ctx)
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.stop = cancel
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(announceEvery)
		defer t.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-t.C:
			}
			if err := b.leases.Announce(actx, api.ServerVersion); err != nil && actx.Err() == nil {
				log.Warn("not announced to the other daemons", "component", "storage", "err", err)
			}
			b.refresh(actx)
		}
	}()
	log.Info("storage backend is shared", "component", "storage", "backend", b.name, "holder", b.leases.Holder())
	return b, nil
}

// close stops the announcements and closes the pool (after the stores that use it).
func (b *backend) close() {
	if b == nil || b.pool == nil {
		return
	}
	b.stop()
	b.wg.Wait()
	b.pool.Close()
}

// snapshot is the shared backend's last observed state for status and health (nil with sqlite): it never
// blocks on the database.
func (b *backend) snapshot() *api.StorageStatus {
	if b == nil || b.leases == nil {
		return nil
	}
	return b.last.Load()
}

// refresh reads the peers seen and the live leases and claims into the snapshot.
func (b *backend) refresh(ctx context.Context) {
	st := b.read(ctx)
	b.last.Store(&st)
}

func (b *backend) read(ctx context.Context) api.StorageStatus {
	out := api.StorageStatus{Backend: b.name}
	out.Holder = b.leases.Holder()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	peers, err := b.leases.Peers(ctx, peersWithin)
	if err != nil {
		// The error may not quote the URL (it never does), but keep it short: the SQLSTATE when there is one.
		out.Error = "database unreachable"
		if c := pgdb.Code(err); c != "" {
			out.Error += " (SQLSTATE " + c + ")"
		}
		return out
	}
	for _, p := range peers {
		out.Peers = append(out.Peers, api.StoragePeer{Holder: p.Holder, Host: p.Host, PID: p.PID, Version: p.Version,
			SeenAt: p.Seen.UTC().Format(time.RFC3339)})
	}
	if n, err := b.leases.RunningSlots(ctx); err == nil {
		out.Claims = n
	}
	if held, err := b.leases.Held(ctx); err == nil {
		out.Leases = len(held)
	}
	return out
}

// recoverEvery is how often a daemon on a shared database marks interrupted the turns whose owner's lease
// lapsed (a daemon that died mid-turn).
const recoverEvery = 10 * time.Second

// openSharedChat opens the chat sessions in the shared database, owned turn by turn through leases held as
// this daemon, and keeps recovering the turns of daemons that died (until the backend closes).
func openSharedChat(ctx context.Context, b *backend, log *slog.Logger) (*pgchat.Store, error) {
	st, err := pgchat.Open(ctx, b.pool, pgchat.Options{Holder: b.leases.Holder()})
	if err != nil {
		return nil, fmt.Errorf("daemon: storage.backend %q: chat sessions: %w", b.name, err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.stopChat = cancel
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		st.RunRecovery(rctx, recoverEvery, func(n int, err error) {
			switch {
			case err != nil && rctx.Err() == nil:
				log.Warn("interrupted turns of other daemons not recovered", "component", "storage", "err", err)
			case n > 0:
				log.Info("marked interrupted the turns of a daemon that stopped", "component", "storage", "sessions", n)
			}
		})
	}()
	return st, nil
}

// heartbeatLeader is the heartbeat's Leader on the shared backend (nil with sqlite: the daemon always runs its
// slots): the lease "heartbeat:<agent>", held across slots by the daemon that runs them.
func (b *backend) heartbeatLeader() heartbeat.Leader {
	if b == nil || b.leases == nil {
		return nil
	}
	return leaseLeader{b.leases}
}

type leaseLeader struct{ leases *lease.Store }

func (l leaseLeader) Lead(ctx context.Context, agent string, hold time.Duration) (bool, string, error) {
	got, ok, err := l.leases.Acquire(ctx, "heartbeat:"+agent, hold)
	if err != nil {
		return false, "", err
	}
	return ok, got.Holder, nil
}
