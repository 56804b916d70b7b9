package jsonrpc

import (
	"errors"
	"sync"
)

// errStopped is returned by push when the caller's stop channel fired while it waited for space.
var errStopped = errors.New("jsonrpc: enqueue stopped")

// outQueue is the bounded FIFO of outbound frames between producers (handlers, Notify, Call, the reader's
// error replies) and the connection's single writer. Queued bytes count until a frame has been written.
type outQueue struct {
	max int

	ready chan struct{} // capacity 1: wakes the writer after a push or close

	mu      sync.Mutex // guards the fields below
	frames  [][]byte
	bytes   int
	closed  bool
	started bool          // Serve runs: direct writes are allowed (before, every frame waits in the queue)
	writing bool          // a frame is being written (by the writer or a direct sender): the socket has one writer
	space   chan struct{} // closed (and replaced) when bytes shrink or the queue closes
}

func newOutQueue(maxBytes int) *outQueue {
	return &outQueue{max: maxBytes, ready: make(chan struct{}, 1), space: make(chan struct{})}
}

// push appends frame (which ends in "\n"). It waits while the queue is non-empty and frame would take it
// over max, so a frame larger than max is still accepted alone; force skips the wait (terminal frames).
// It returns ErrClosed once the queue is closed, or errStopped when stop fires first.
func (q *outQueue) push(stop <-chan struct{}, frame []byte, force bool) error {
	q.mu.Lock()
	for !q.closed && !force && q.bytes > 0 && q.bytes+len(frame) > q.max {
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
	q.frames = append(q.frames, frame)
	q.bytes += len(frame)
	q.mu.Unlock()
	q.wake()
	return nil
}

// pushFront puts frame (the unwritten rest of a frame whose write stalled) before every queued frame, even on
// a closed queue: it must go out first. The caller holds the write claim. An empty frame is ignored.
func (q *outQueue) pushFront(frame []byte) {
	if len(frame) == 0 {
		return
	}
	q.mu.Lock()
	q.frames = append([][]byte{frame}, q.frames...)
	q.bytes += len(frame)
	q.mu.Unlock()
	q.wake()
}

// claim takes the socket for a direct write of n bytes when Serve has started and nothing is queued or being
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

// start allows direct writes; Serve calls it once the socket is its to write.
func (q *outQueue) start() {
	q.mu.Lock()
	q.started = true
	q.mu.Unlock()
}

// next blocks until a frame is available and nobody else is writing (true), or the queue is closed, empty
// and idle (false). The frame counts as being written until release.
func (q *outQueue) next() ([]byte, bool) {
	for {
		q.mu.Lock()
		if len(q.frames) > 0 && !q.writing {
			f := q.frames[0]
			q.frames[0] = nil
			q.frames = q.frames[1:]
			q.writing = true
			q.mu.Unlock()
			return f, true
		}
		done := q.closed && len(q.frames) == 0 && !q.writing
		q.mu.Unlock()
		if done {
			return nil, false
		}
		<-q.ready
	}
}

// release ends the write of a frame of n bytes (taken by next or claim), written or abandoned.
func (q *outQueue) release(n int) {
	q.mu.Lock()
	q.bytes -= n
	q.writing = false
	more := len(q.frames) > 0 || q.closed
	if q.bytes < q.max {
		q.signalSpaceLocked()
	}
	q.mu.Unlock()
	if more {
		q.wake()
	}
}

// close stops accepting frames; with discard the frames not yet taken by the writer are dropped too.
func (q *outQueue) close(discard bool) {
	q.mu.Lock()
	q.closed = true
	if discard {
		for _, f := range q.frames {
			q.bytes -= len(f)
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
	close(q.space)
	q.space = make(chan struct{})
}

func (q *outQueue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
