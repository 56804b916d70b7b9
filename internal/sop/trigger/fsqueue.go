package trigger

import "time"

// DefaultMaxPendingFS bounds the filesystem events waiting to settle: a storm (10^5 files created at once)
// holds at most this many, the rest are dropped and counted (logged once per burst).
const DefaultMaxPendingFS = 4096

// fsQueue is the watcher's pending events, keyed by kind and path, at most max of them. next, the earliest
// due time, is kept as events are added (a burst costs O(1) per event, not a scan each) and recomputed when
// due events are taken.
type fsQueue struct {
	max     int
	m       map[string]*pendingEvent
	first   time.Time
	dropped int
}

func newFSQueue(max int) *fsQueue {
	if max <= 0 {
		max = DefaultMaxPendingFS
	}
	return &fsQueue{max: max, m: map[string]*pendingEvent{}}
}

func (q *fsQueue) len() int { return len(q.m) }

func (q *fsQueue) has(k string) bool { _, ok := q.m[k]; return ok }

// add queues p under k; it reports false (and counts a drop) when the queue is full.
func (q *fsQueue) add(k string, p *pendingEvent) bool {
	if len(q.m) >= q.max {
		q.dropped++
		return false
	}
	q.m[k] = p
	if q.first.IsZero() || p.due.Before(q.first) {
		q.first = p.due
	}
	return true
}

// next is the earliest due time, zero when the queue is empty.
func (q *fsQueue) next() time.Time { return q.first }

// due removes and returns the events due at now.
func (q *fsQueue) due(now time.Time) []*pendingEvent {
	var out []*pendingEvent
	q.first = time.Time{}
	for k, p := range q.m {
		if !p.due.After(now) {
			delete(q.m, k)
			out = append(out, p)
			continue
		}
		if q.first.IsZero() || p.due.Before(q.first) {
			q.first = p.due
		}
	}
	return out
}

// takeDropped returns how many events were refused since the last call, and resets the count.
func (q *fsQueue) takeDropped() int {
	n := q.dropped
	q.dropped = 0
	return n
}
