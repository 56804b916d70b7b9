// Package controlplane supervises background work (state.md §7): each task is registered in
// data/control_plane.db with this process's boot id and pid; at start the running tasks of another boot are
// lost, and a sweep every 60 s times out this boot's tasks whose heartbeat is older than the max runtime. It
// also runs the delegate tool's tasks (Delegations) and reads and writes their result files.
package controlplane

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Upstream's supervision constants (control_plane/reaper.rs).
const (
	SweepInterval     = 60 * time.Second
	DefaultMaxRuntime = 3600 * time.Second
)

// Options configure a Plane. Store is required.
type Options struct {
	Store  *store.TaskStore
	Clock  clock.Clock
	Logger *slog.Logger
	// BootID identifies this process's run (a random UUID per process, kept across in-process reloads);
	// "" means a new one.
	BootID string
	PID    int
	// MaxRuntime is how old a heartbeat may get before the sweep times the task out; 0: DefaultMaxRuntime.
	MaxRuntime time.Duration
}

// Plane is the control plane of one daemon process. Its methods are safe for concurrent use.
type Plane struct {
	o   Options
	log *slog.Logger

	wg sync.WaitGroup // the sweep loop

	mu     sync.Mutex // guards the fields below
	cancel context.CancelFunc
	closed bool
}

// Open recovers from the previous process (its running tasks become lost) and returns the plane; Start begins
// the sweep.
func Open(ctx context.Context, o Options) (*Plane, error) {
	o.Clock = clock.OrReal(o.Clock)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BootID == "" {
		o.BootID = NewUUID()
	}
	if o.MaxRuntime <= 0 {
		o.MaxRuntime = DefaultMaxRuntime
	}
	p := &Plane{o: o, log: o.Logger.With("component", "controlplane")}
	n, err := p.reclaim(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		p.log.Info("tasks of a previous process marked lost", "count", n, "boot_id", o.BootID)
	}
	return p, nil
}

// BootID is this process's boot id.
func (p *Plane) BootID() string { return p.o.BootID }

// reclaim marks lost every running task of another boot (and an unstamped one with no live owner).
func (p *Plane) reclaim(ctx context.Context) (int, error) {
	tasks, err := p.o.Store.RunningTasks(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		if t.OwnerBootID == p.o.BootID || (t.OwnerBootID == "" && t.OwnerPID != 0) {
			continue
		}
		ok, err := p.o.Store.MarkLost(ctx, t.ID, p.o.Clock.Now())
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// Start runs the sweep every SweepInterval until Close (ctx's values are kept, not its cancellation).
func (p *Plane) Start(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.cancel != nil {
		return
	}
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.wg.Add(1)
	go p.loop(ctx)
}

func (p *Plane) loop(ctx context.Context) {
	defer p.wg.Done()
	for {
		t := p.o.Clock.NewTimer(SweepInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := p.Sweep(ctx); err != nil {
			p.log.Warn("control-plane sweep failed", "err", err)
		}
	}
}

// Sweep reclaims other boots' running tasks and times out this boot's tasks whose heartbeat is older than the
// max runtime (a task without a heartbeat is never timed out).
func (p *Plane) Sweep(ctx context.Context) error {
	if _, err := p.reclaim(ctx); err != nil {
		return err
	}
	tasks, err := p.o.Store.RunningTasks(ctx)
	if err != nil {
		return err
	}
	now := p.o.Clock.Now()
	for _, t := range tasks {
		if t.OwnerBootID != p.o.BootID || t.HeartbeatAt == nil || now.Sub(*t.HeartbeatAt) <= p.o.MaxRuntime {
			continue
		}
		if ok, err := p.o.Store.FinishTask(ctx, t.ID, store.TaskTimedOut, "", "heartbeat timeout", now); err != nil {
			return err
		} else if ok {
			p.log.Warn("task timed out", "task", t.ID, "kind", t.Kind)
		}
	}
	return nil
}

// Close stops the sweep and waits for it; it is idempotent.
func (p *Plane) Close() {
	p.mu.Lock()
	p.closed = true
	if p.cancel != nil {
		p.cancel()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Begin registers a running task of this boot, with its first heartbeat now.
func (p *Plane) Begin(ctx context.Context, id, kind, agent, ref string, started time.Time) error {
	hb := started
	return p.o.Store.CreateTask(ctx, store.Task{ID: id, Kind: kind, Agent: agent, Status: store.TaskRunning,
		OwnerPID: p.o.PID, OwnerBootID: p.o.BootID, HeartbeatAt: &hb, IdemKey: ref, StartedAt: started})
}

// Heartbeat refreshes this boot's task id.
func (p *Plane) Heartbeat(ctx context.Context, id string) error {
	return p.o.Store.Heartbeat(ctx, id, p.o.BootID, p.o.Clock.Now())
}

// End records a task's terminal status unless it is terminal already (a timed_out task stays timed out).
func (p *Plane) End(ctx context.Context, id, status, output, errText string) error {
	_, err := p.o.Store.FinishTask(ctx, id, status, output, errText, p.o.Clock.Now())
	return err
}

// Task returns task id.
func (p *Plane) Task(ctx context.Context, id string) (store.Task, error) {
	return p.o.Store.Task(ctx, id)
}

// NewUUID returns a random version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
