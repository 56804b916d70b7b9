// Package runfeed is the live feed of SOP run changes that the native socket's sops/subscribe and the
// gateway's /ws/sops/runs serve: one shared ring of the latest changes, read by every subscriber at its own
// pace. Memory is the ring plus one cursor per subscriber, however many subscribers there are and however
// slowly they read; a subscriber that falls a ring behind is told how many changes it missed.
package runfeed

import (
	"context"
	"errors"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// DefaultCapacity is the ring's size: upstream's run-change broadcast channel holds 256.
const DefaultCapacity = 256

// ErrClosed is returned by Next once the hub is closed.
var ErrClosed = errors.New("runfeed: closed")

// Hub fans run changes out to subscribers. The zero value is not usable; call New.
type Hub struct {
	mu     sync.Mutex // mu guards the fields below
	ring   []api.SopRunSummary
	seq    uint64        // sequence number of the next change published; the ring holds [seq-len, seq)
	wake   chan struct{} // closed and replaced on every publish
	closed bool
	subs   int
}

// New returns a hub whose ring keeps capacity changes (DefaultCapacity when capacity <= 0).
func New(capacity int) *Hub {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Hub{ring: make([]api.SopRunSummary, capacity), wake: make(chan struct{})}
}

// Publish records one change and wakes the subscribers. It never blocks on a subscriber.
func (h *Hub) Publish(run api.SopRunSummary) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.ring[h.seq%uint64(len(h.ring))] = run
	h.seq++
	close(h.wake)
	h.wake = make(chan struct{})
}

// Close ends every subscription: Next returns ErrClosed once the ring is drained.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.wake)
	}
}

// Subscribers is the number of open subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs
}

// Subscribe starts a subscription at the current end of the feed: it sees the changes published after it.
// Take the snapshot a subscriber is sent after subscribing, so no change falls between the two.
func (h *Hub) Subscribe() *Sub {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs++
	return &Sub{h: h, next: h.seq}
}

// Sub is one subscriber's cursor. It is used by one goroutine.
type Sub struct {
	h      *Hub
	next   uint64
	closed bool
}

// Delivery is what Next returns: the changes in order, after Missed changes that left the ring unread.
type Delivery struct {
	Missed uint64
	Runs   []api.SopRunSummary
}

// Next waits for changes after the last delivered one (or for ctx, or the hub's close) and returns at most
// max of them (max <= 0: all that are there).
func (s *Sub) Next(ctx context.Context, max int) (Delivery, error) {
	h := s.h
	for {
		h.mu.Lock()
		if s.next < h.seq {
			var d Delivery
			oldest := uint64(0)
			if h.seq > uint64(len(h.ring)) {
				oldest = h.seq - uint64(len(h.ring))
			}
			if s.next < oldest {
				d.Missed = oldest - s.next
				s.next = oldest
			}
			n := h.seq - s.next
			if max > 0 && n > uint64(max) {
				n = uint64(max)
			}
			d.Runs = make([]api.SopRunSummary, 0, n)
			for i := range n {
				d.Runs = append(d.Runs, h.ring[(s.next+i)%uint64(len(h.ring))])
			}
			s.next += n
			h.mu.Unlock()
			return d, nil
		}
		if h.closed {
			h.mu.Unlock()
			return Delivery{}, ErrClosed
		}
		wake := h.wake
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return Delivery{}, ctx.Err()
		case <-wake:
		}
	}
}

// Close ends the subscription (idempotent).
func (s *Sub) Close() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.h.subs--
	}
}
