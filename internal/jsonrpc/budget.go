package jsonrpc

import (
	"runtime/debug"
	"sync"
	"time"
)

// DefaultBudgetBytes is the default size of a Budget: eight frames of the default maximum size.
const DefaultBudgetBytes = 64 << 20

// A frame is charged to the Budget only for the part of its buffer beyond unchargedFrameBytes (the largest size
// of a connection's read buffer): small frames, the common case, never touch the shared lock.
const unchargedFrameBytes = maxReadBuffer

// After a frame charged with at least trimFrameBytes is released, the freed memory is handed back to the
// operating system (debug.FreeOSMemory), at most once per trimInterval and trimDelay after the release, so a
// burst of large frames does not leave the daemon's RSS at its peak.
const (
	trimFrameBytes = 1 << 20
	trimInterval   = time.Second
	trimDelay      = 50 * time.Millisecond
)

// Budget bounds the bytes that inbound frames hold at once across every connection that shares it: a frame is
// charged from the moment its buffer grows past the read buffer's size until the connection releases it (when
// its handler has decoded the params or returned). A reader that needs more than is left waits, and so stops
// reading its socket: the peer is slowed down by flow control instead of growing the daemon's memory.
//
// Waiting readers are served largest holding first, so frames already under way finish (and release) first.
// When every byte in use belongs to a waiting reader, nothing would ever be released: the largest is then let
// through anyway, so readers never deadlock and the budget is exceeded by at most about one frame.
//
// A nil *Budget charges nothing. All methods are safe for concurrent use.
type Budget struct {
	freeOSMemory func() // debug.FreeOSMemory; replaced in tests

	mu       sync.Mutex // guards the fields below
	max      int64
	used     int64
	peak     int64 // the most ever charged at once
	waiters  []*budgetWaiter
	waitHeld int64 // the bytes held by the readers in waiters
	lastTrim time.Time
	trim     *time.Timer // a pending trim, or nil
	closed   bool
}

type budgetWaiter struct {
	held  int64         // what the reader already holds
	n     int64         // what it asks for
	ready chan struct{} // closed when granted
}

// NewBudget returns a Budget of maxBytes (DefaultBudgetBytes if <= 0).
func NewBudget(maxBytes int64) *Budget {
	b := &Budget{freeOSMemory: debug.FreeOSMemory}
	b.SetLimit(maxBytes)
	return b
}

// SetLimit changes the size of the budget (DefaultBudgetBytes if <= 0); frames already charged keep their bytes.
func (b *Budget) SetLimit(maxBytes int64) {
	if maxBytes <= 0 {
		maxBytes = DefaultBudgetBytes
	}
	b.mu.Lock()
	b.max = maxBytes
	b.grantLocked()
	b.mu.Unlock()
}

// Used returns the bytes currently charged.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak returns the most bytes ever charged at once.
func (b *Budget) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// Close stops a pending memory trim; the budget keeps working.
func (b *Budget) Close() {
	b.mu.Lock()
	b.closed = true
	if b.trim != nil {
		b.trim.Stop()
		b.trim = nil
	}
	b.mu.Unlock()
}

// acquire charges n more bytes to a reader that already holds held. It waits while the budget cannot take them
// (see Budget) and reports whether it waited; it returns errStopped, charging nothing, when stop fires first.
func (b *Budget) acquire(stop <-chan struct{}, held, n int64) (waited bool, err error) {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.max {
		b.used += n
		b.peak = max(b.peak, b.used)
		b.mu.Unlock()
		return false, nil
	}
	w := &budgetWaiter{held: held, n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.waitHeld += held
	b.grantLocked()
	b.mu.Unlock()
	select {
	case <-w.ready:
		return true, nil
	case <-stop:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile: give it back
		b.used -= n
	default:
		for i, x := range b.waiters {
			if x == w {
				b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
				break
			}
		}
		b.waitHeld -= held
	}
	b.grantLocked()
	return true, errStopped
}

// release returns n charged bytes.
func (b *Budget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.grantLocked()
	if n >= trimFrameBytes && !b.closed && b.trim == nil {
		delay := max(trimDelay, time.Until(b.lastTrim.Add(trimInterval)))
		b.trim = time.AfterFunc(delay, b.runTrim)
	}
}

func (b *Budget) runTrim() {
	b.mu.Lock()
	b.trim = nil
	b.lastTrim = time.Now()
	b.mu.Unlock()
	b.freeOSMemory()
}

// grantLocked lets waiting readers through, largest holding first, while they fit; when every byte in use is
// held by a waiting reader it lets the largest through regardless.
func (b *Budget) grantLocked() {
	for len(b.waiters) > 0 {
		best := 0
		for i, w := range b.waiters {
			if w.held > b.waiters[best].held {
				best = i
			}
		}
		w := b.waiters[best]
		if b.used+w.n > b.max && b.used != b.waitHeld {
			return // a frame not waiting here will be released
		}
		b.waiters = append(b.waiters[:best], b.waiters[best+1:]...)
		b.waitHeld -= w.held
		b.used += w.n
		b.peak = max(b.peak, b.used)
		close(w.ready)
	}
}

// frameCharge is what the frame being read on one connection holds of a Budget. Only the reader uses it.
type frameCharge struct {
	b    *Budget
	size int64 // the bytes of buffer the frame holds so far
	held int64 // what is charged for them
}

// grow accounts n more bytes of buffer, charging what lies beyond unchargedFrameBytes; see Budget.acquire.
func (f *frameCharge) grow(stop <-chan struct{}, n int) (waited bool, err error) {
	f.size += int64(n)
	need := max(f.size-unchargedFrameBytes, 0) - f.held
	if f.b == nil || need <= 0 {
		return false, nil
	}
	waited, err = f.b.acquire(stop, f.held, need)
	if err == nil {
		f.held += need
	}
	return waited, err
}

// take ends the frame and returns what it holds, to be released with Budget.release once the frame is done.
func (f *frameCharge) take() int64 {
	n := f.held
	f.size, f.held = 0, 0
	return n
}
