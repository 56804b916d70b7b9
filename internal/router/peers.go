package router

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// connIDs is the one source of connection ids for every protocol server of the process (the native protocol,
// ACP, the gateway's WebSockets): the session layer keys turns, approvals and held sessions by connection id,
// so ids minted for different protocols must never be equal. One counter for the process cannot be wired
// wrong, and it stays unique when a test runs several daemons in one process.
var connIDs atomic.Uint64

// NewConnID returns a connection id that no other call in this process returns; ids increase.
func NewConnID() uint64 { return connIDs.Add(1) }

// Peers is the skeleton a protocol server is built on: the registry of its connections (each with the function
// that ends it at once), and the count of work in flight on them, which Drain waits for. P is the protocol's
// per-connection state. The zero value is ready for use; Peers is safe for concurrent use.
type Peers[P any] struct {
	inflight Inflight

	mu     sync.Mutex // mu guards the fields below
	peers  map[uint64]peer[P]
	closed bool
}

type peer[P any] struct {
	p     P
	abort func()
}

// Add registers the connection id (from NewConnID) with its state and the function that ends it (CloseAll
// calls it; it must not block). It returns false, registering nothing, once Close has been called.
func (r *Peers[P]) Add(id uint64, p P, abort func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.peers == nil {
		r.peers = map[uint64]peer[P]{}
	}
	r.peers[id] = peer[P]{p: p, abort: abort}
	return true
}

// Remove forgets the connection id; the connection has ended.
func (r *Peers[P]) Remove(id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.peers, id)
}

// List returns the registered connections' states in the order they were added (by id).
func (r *Peers[P]) List() []P {
	r.mu.Lock()
	ids := make([]uint64, 0, len(r.peers))
	for id := range r.peers {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, cmp.Compare)
	out := make([]P, len(ids))
	for i, id := range ids {
		out[i] = r.peers[id].p
	}
	r.mu.Unlock()
	return out
}

// Len is the number of registered connections.
func (r *Peers[P]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.peers)
}

// Begin counts one unit of work in flight (a request being served); End must follow. Neither allocates.
func (r *Peers[P]) Begin() { r.inflight.Begin() }

// End ends a unit of work counted by Begin.
func (r *Peers[P]) End() { r.inflight.End() }

// Drain waits until no work is in flight, or ctx ends (then it returns ctx's error). It closes nothing: the
// caller ends the connections (their context, or CloseAll past a deadline).
func (r *Peers[P]) Drain(ctx context.Context) error { return r.inflight.Wait(ctx) }

// CloseAll ends every registered connection at once, calling the abort function each was added with. A
// connection stays registered until it is removed (its serving goroutine does that as it returns).
func (r *Peers[P]) CloseAll() {
	r.mu.Lock()
	aborts := make([]func(), 0, len(r.peers))
	for _, p := range r.peers {
		aborts = append(aborts, p.abort)
	}
	r.mu.Unlock()
	for _, abort := range aborts {
		abort()
	}
}

// Close refuses every later Add and ends the registered connections (CloseAll).
func (r *Peers[P]) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.CloseAll()
}

// Inflight counts work in flight as a sync.WaitGroup does, except that Wait takes a context, and Begin may be
// called at any time, also while a Wait is under way (a WaitGroup forbids an Add from zero during a Wait). The
// zero value is ready for use.
type Inflight struct {
	mu   sync.Mutex // mu guards the fields below
	n    int
	idle chan struct{} // made by a Wait while n > 0, closed when n drops to 0
}

// Begin counts one unit of work; End must follow.
func (w *Inflight) Begin() {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
}

// End ends one unit of work counted by Begin. It panics when nothing is in flight.
func (w *Inflight) End() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		panic("router: Inflight.End without Begin")
	}
	w.n--
	if w.n == 0 && w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
}

// Wait returns nil once no work is in flight (at once when none is), or ctx's error when ctx ends first. Work
// begun after the count reached zero is not waited for.
func (w *Inflight) Wait(ctx context.Context) error {
	w.mu.Lock()
	if w.n == 0 {
		w.mu.Unlock()
		return nil
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	idle := w.idle
	w.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
