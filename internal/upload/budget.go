// Package upload stages chunked uploads (protocol.md §7) under one byte budget shared by every connection, and
// stores finished files in an agent's workspace by content.
package upload

import (
	"errors"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
)

// Sentinel errors; the rpc layer maps each to its wire code.
var (
	// ErrInvalid (-32602): a limit or rule of protocol.md §7 refused the call; wrapped with what was wrong.
	ErrInvalid = errors.New("upload: invalid")
	// ErrForbidden (-32012): the caller may not use this form (a path attachment from a peer that may not make
	// the daemon read its files).
	ErrForbidden = errors.New("upload: forbidden")
)

// IdleTimeout is how long an upload may go without a begin, chunk or commit before it is abandoned.
const IdleTimeout = 5 * time.Minute

// metaOverhead is charged to the budget for every upload besides its payload and the strings it keeps: the
// bookkeeping structures themselves, so that an empty upload is not free.
const metaOverhead = 256

// Options configure a Budget.
type Options struct {
	// Limit is the bytes all staged uploads may hold together; 0 means api.UploadBudgetBytes.
	Limit int64
	// Clock measures idleness; nil means clock.Real.
	Clock clock.Clock
}

// Budget is the one ceiling on what staged uploads hold, shared by every connection's Staging. An upload is
// charged its declared size plus the metadata it keeps when it begins, so its chunks never fail for lack of
// room halfway, and the charge is returned exactly once: when it is committed, discarded, reclaimed or dropped
// with its connection. All methods are safe for concurrent use.
type Budget struct {
	limit int64
	clock clock.Clock

	mu   sync.Mutex // guards the fields below; taken before any upload's mu, never after
	used int64
	live map[*upload]struct{} // every upload holding a charge, for reclaiming idle ones
}

// NewBudget returns an empty Budget.
func NewBudget(o Options) *Budget {
	if o.Limit <= 0 {
		o.Limit = api.UploadBudgetBytes
	}
	return &Budget{limit: o.Limit, clock: clock.OrReal(o.Clock), live: map[*upload]struct{}{}}
}

// Used returns the bytes charged now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Staged returns how many uploads hold a charge now.
func (b *Budget) Staged() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.live)
}

func (b *Budget) now() time.Time { return b.clock.Now() }

// reserve charges u.charge. When it does not fit, every upload idle for IdleTimeout or longer is reclaimed,
// whatever connection holds it, and the charge is tried again.
func (b *Budget) reserve(u *upload, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+u.charge > b.limit {
		b.reclaimIdleLocked(now)
		if b.used+u.charge > b.limit {
			return false
		}
	}
	b.used += u.charge
	b.live[u] = struct{}{}
	return true
}

// reclaimIdleLocked releases every upload idle past IdleTimeout. An upload whose lock is held is being used
// right now, so it is not idle. The caller holds b.mu.
func (b *Budget) reclaimIdleLocked(now time.Time) {
	for u := range b.live {
		if !u.mu.TryLock() {
			continue
		}
		detached := func() []byte { return nil }
		if !u.dead && now.Sub(u.last) >= IdleTimeout {
			u.dead = true
			detached = u.detachLocked()
			delete(b.live, u)
			b.used -= u.charge
		}
		u.mu.Unlock()
		free(detached())
	}
}

// release returns u's charge and frees its bytes, once; it is a no-op for an upload already released or
// handed to a commit.
func (b *Budget) release(u *upload) {
	u.mu.Lock()
	if u.dead {
		u.mu.Unlock()
		return
	}
	u.dead = true
	detached := u.detachLocked()
	u.mu.Unlock()
	free(detached())
	b.uncharge(u)
}

// uncharge returns u's charge (u is dead and no longer reachable through it).
func (b *Budget) uncharge(u *upload) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.live[u]; ok {
		delete(b.live, u)
		b.used -= u.charge
	}
}
