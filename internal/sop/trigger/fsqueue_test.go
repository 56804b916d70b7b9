package trigger

import (
	"fmt"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// TestFSQueueIsBounded: an event storm (10^5 files created under a watched directory) must not make the
// watcher hold one pending event per file. Past its room the queue refuses an event and counts it, so what
// was dropped is reported, not silently lost; the earliest due time is known without a scan, and taking the
// due events frees their room.
func TestFSQueueIsBounded(t *testing.T) {
	q := newFSQueue(10)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 50; i++ {
		p := &pendingEvent{kind: sop.FSCreated, path: fmt.Sprintf("/w/f%d", i), due: t0.Add(time.Duration(50-i) * time.Second)}
		added := q.add(string(p.kind)+"\x00"+p.path, p)
		if added != (i < 10) {
			t.Fatalf("event %d: added %v with %d held", i, added, q.len())
		}
	}
	if q.len() != 10 {
		t.Fatalf("queue holds %d events, want 10", q.len())
	}
	if n := q.takeDropped(); n != 40 {
		t.Fatalf("dropped %d, want 40", n)
	}
	if n := q.takeDropped(); n != 0 {
		t.Fatalf("the dropped count was not reset: %d", n)
	}
	if !q.has(string(sop.FSCreated) + "\x00/w/f3") {
		t.Fatal("a held event is not found")
	}
	// f9 is due first (t0+41s) among those held.
	if next := q.next(); !next.Equal(t0.Add(41 * time.Second)) {
		t.Fatalf("next due %v", next)
	}
	due := q.due(t0.Add(45 * time.Second)) // f5..f9
	if len(due) != 5 || q.len() != 5 {
		t.Fatalf("took %d due events, %d left", len(due), q.len())
	}
	if next := q.next(); !next.Equal(t0.Add(46 * time.Second)) {
		t.Fatalf("next due after taking %v", next)
	}
	p := &pendingEvent{kind: sop.FSCreated, path: "/w/again", due: t0.Add(time.Second)}
	if !q.add("again", p) || !q.next().Equal(t0.Add(time.Second)) {
		t.Fatal("room freed by the due events is not reused, or an earlier event did not move the next due time")
	}
	q.due(t0.Add(time.Hour))
	if q.len() != 0 || !q.next().IsZero() {
		t.Fatalf("an empty queue: len %d next %v", q.len(), q.next())
	}
}
