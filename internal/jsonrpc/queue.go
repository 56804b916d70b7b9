package jsonrpc

import (
	"errors"
	"sync"
)

// errStopped is returned by push when the caller's stop channel fired while it waited for space.
var errStopped = errors.New("jsonrpc: enqueue stopped")

// outFrame is one outbound frame (ending in "\n") and the pooled buffer it lives in, recycled once the frame has
// been written; buf is nil for a frame that is not pooled.
type outFrame struct {
	b   []byte
	buf *frameBuf
}

// outQueue is the bounded FIFO of outbound frames between producers (handlers, Notify, Call, the reader's error
// replies) and the transport, which has one writer at a time. Queued bytes count until a frame has been written.
//
// Nothing runs while nothing is queued: a producer that finds the queue empty and idle writes its frame itself
// (claim), and a drain goroutine is started only when frames wait, ending once the queue is empty again.
type outQueue struct {
	max   int
	write func([]outFrame) // writes frames in order; the caller holds the write claim
	wg    sync.WaitGroup   // drain goroutines

	one      [1]outFrame // the frame being written by drain or flush when it is alone; owned by the write claim
	batching bool        // write takes several frames at once (a byte-stream framer); else one at a time

	ready chan struct{} // capacity 1: wakes flush after a release or close

	mu       sync.Mutex // guards the fields below
	frames   []outFrame
	bytes    int
	closed   bool
	started  bool          // Serve runs: frames may be written (before, every frame waits in the queue)
	writing  bool          // a frame is being written (by a drainer, flush or a direct sender): one writer at a time
	draining bool          // a drain goroutine runs
	space    chan struct{} // closed when bytes shrink or the queue closes; nil when nobody waits for space
}

// A writer that finds several frames queued takes up to maxBatchFrames of them, maxBatchBytes in all (a first
// frame larger than that alone), and hands them to write together.
const (
	maxBatchFrames = 64
	maxBatchBytes  = 32 << 10
)

func newOutQueue(maxBytes int, write func([]outFrame)) *outQueue {
	return &outQueue{max: maxBytes, write: write, ready: make(chan struct{}, 1)}
}

// push appends f. It waits while the queue is non-empty and f would take it over max, so a frame larger than
// max is still accepted alone; force skips the wait (terminal frames). It returns ErrClosed once the queue is
// closed, or errStopped when stop fires first.
func (q *outQueue) push(stop <-chan struct{}, f outFrame, force bool) error {
	q.mu.Lock()
	for !q.closed && !force && q.bytes > 0 && q.bytes+len(f.b) > q.max {
		if q.space == nil {
			q.space = make(chan struct{})
		}
		space := q.space
		q.mu.Unlock()
		select {
		case <-space:
		case <-stop:
			return errStopped
		}
		q.mu.Lock()
	}
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.frames = append(q.frames, f)
	q.bytes += len(f.b)
	q.kickLocked()
	q.mu.Unlock()
	return nil
}

// pushFront puts fs (the unwritten rest of a write that stalled, in order) before every queued frame, even on a
// closed queue: they must go out first. The caller holds the write claim. Empty frames are ignored.
func (q *outQueue) pushFront(fs []outFrame) {
	n := 0
	for _, f := range fs {
		n += len(f.b)
	}
	if n == 0 {
		return
	}
	q.mu.Lock()
	front := make([]outFrame, 0, len(fs)+len(q.frames))
	for _, f := range fs {
		if len(f.b) > 0 {
			front = append(front, f)
		}
	}
	q.frames = append(front, q.frames...)
	q.bytes += n
	q.mu.Unlock()
}

// claim takes the transport for a direct write of n bytes when Serve has started and nothing is queued or being
// written; the caller must write and then call release(n). It reports false when the frame must be queued.
func (q *outQueue) claim(n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started || q.closed || q.writing || len(q.frames) > 0 {
		return false
	}
	q.writing = true
	q.bytes += n
	return true
}

// start allows writes; Serve calls it once the transport is its to write. Frames queued before are drained.
func (q *outQueue) start() {
	q.mu.Lock()
	q.started = true
	q.kickLocked()
	q.mu.Unlock()
}

// kickLocked starts a drain goroutine when frames wait and nobody writes or drains. A closed queue is flushed by
// Serve instead, so no goroutine starts after Serve waits for them.
func (q *outQueue) kickLocked() {
	if !q.started || q.closed || q.writing || q.draining || len(q.frames) == 0 {
		return
	}
	q.draining = true
	q.wg.Add(1)
	go q.drain()
}

// drain writes queued frames until the queue is empty or another writer holds the claim (whose release starts
// a new drain if frames are left).
func (q *outQueue) drain() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if len(q.frames) == 0 || q.writing {
			q.draining = false
			q.mu.Unlock()
			return
		}
		fs, n := q.popLocked()
		q.mu.Unlock()
		q.write(fs)
		q.release(n)
	}
}

// flush writes what is queued from the calling goroutine, waiting while another writer holds the claim, until
// the queue is closed, empty and idle; then it waits for the drain goroutines to end. Serve calls it last.
func (q *outQueue) flush() {
	for {
		q.mu.Lock()
		if len(q.frames) > 0 && !q.writing {
			fs, n := q.popLocked()
			q.mu.Unlock()
			q.write(fs)
			q.release(n)
			continue
		}
		done := q.closed && len(q.frames) == 0 && !q.writing
		q.mu.Unlock()
		if done {
			break
		}
		<-q.ready
	}
	q.wg.Wait()
}

// popLocked takes the write claim and the first queued frame, with the frames behind it that fit the batch
// bounds; it returns them (a lone frame in q.one, which the writer clears) and their bytes.
func (q *outQueue) popLocked() ([]outFrame, int) {
	k, n := 0, 0
	for k < len(q.frames) && (k == 0 || q.batching && k < maxBatchFrames && n+len(q.frames[k].b) <= maxBatchBytes) {
		n += len(q.frames[k].b)
		k++
	}
	var fs []outFrame
	if k == 1 {
		fs = q.one[:]
	} else {
		fs = make([]outFrame, k)
	}
	copy(fs, q.frames[:k])
	clear(q.frames[:k])
	q.frames = q.frames[k:]
	if len(q.frames) == 0 && cap(q.frames) > 64 {
		q.frames = nil // let the backing array of a burst go
	}
	q.writing = true
	return fs, n
}

// release ends the write of a frame of n bytes (taken by claim, drain or flush), written or abandoned.
func (q *outQueue) release(n int) {
	q.mu.Lock()
	q.bytes -= n
	q.writing = false
	if q.bytes < q.max {
		q.signalSpaceLocked()
	}
	q.kickLocked()
	q.mu.Unlock()
	q.wake()
}

// close stops accepting frames; with discard the frames not yet taken by a writer are dropped too.
func (q *outQueue) close(discard bool) {
	q.mu.Lock()
	q.closed = true
	if discard {
		for _, f := range q.frames {
			q.bytes -= len(f.b)
		}
		q.frames = nil
	}
	q.signalSpaceLocked()
	q.mu.Unlock()
	q.wake()
}

// queued returns the bytes currently queued or being written.
func (q *outQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}

func (q *outQueue) signalSpaceLocked() {
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
}

func (q *outQueue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
