package router_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Drain returns at once when nothing is in flight, waits for every unit of work begun before it, and returns
// ctx's error when ctx ends first.
func TestPeersDrainWaitsForInflight(t *testing.T) {
	t.Parallel()
	var r router.Peers[string]
	if err := r.Drain(t.Context()); err != nil {
		t.Fatalf("idle Drain = %v", err)
	}
	r.Begin()
	r.Begin()
	drained := make(chan error, 1)
	go func() { drained <- r.Drain(t.Context()) }()
	r.End()
	select {
	case err := <-drained:
		t.Fatalf("Drain returned (%v) with one request still in flight", err)
	case <-time.After(20 * time.Millisecond):
	}
	r.End()
	if err := <-drained; err != nil {
		t.Fatalf("Drain = %v once the work ended", err)
	}

	r.Begin()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { drained <- r.Drain(ctx) }()
	cancel()
	if err := <-drained; !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain with a cancelled ctx = %v, want context.Canceled", err)
	}
	r.End()
	if err := r.Drain(t.Context()); err != nil {
		t.Fatalf("Drain after the last End = %v", err)
	}
}

// Work begun while a Drain waits does not confuse the count: several Drains all return once it reaches zero.
func TestInflightConcurrentBeginAndWait(t *testing.T) {
	t.Parallel()
	var w router.Inflight
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 20 {
		w.Begin()
		wg.Go(func() {
			<-release
			w.End()
		})
	}
	waits := make(chan error, 5)
	for range 5 {
		go func() { waits <- w.Wait(t.Context()) }()
	}
	close(release)
	wg.Wait()
	for range 5 {
		if err := <-waits; err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("End without Begin did not panic")
		}
	}()
	w.End()
}

// Connection ids are unique across every registry (one per protocol), also when minted concurrently.
func TestConnIDsUniqueAcrossProtocols(t *testing.T) {
	t.Parallel()
	var native, acp, ws router.Peers[uint64]
	regs := []*router.Peers[uint64]{&native, &acp, &ws}
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for _, r := range regs {
		for range 4 {
			wg.Go(func() {
				for range 250 {
					id := router.NewConnID()
					if !r.Add(id, id, func() {}) {
						t.Error("Add refused before Close")
					}
					mu.Lock()
					if seen[id] {
						t.Errorf("connection id %d minted twice", id)
					}
					seen[id] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(seen) != 3*4*250 {
		t.Fatalf("%d distinct ids, want %d", len(seen), 3*4*250)
	}
	for _, r := range regs {
		list := r.List()
		if len(list) != 1000 || r.Len() != 1000 {
			t.Fatalf("List has %d, Len %d, want 1000", len(list), r.Len())
		}
		for i := 1; i < len(list); i++ {
			if list[i] <= list[i-1] {
				t.Fatalf("List is not in id order at %d: %d after %d", i, list[i], list[i-1])
			}
		}
	}
}

// CloseAll ends every registered connection and leaves the registry open; Close also refuses later Adds.
// Removed connections are not ended.
func TestPeersCloseAll(t *testing.T) {
	t.Parallel()
	var r router.Peers[string]
	var aborted atomic.Int32
	ids := make([]uint64, 5)
	for i := range ids {
		ids[i] = router.NewConnID()
		r.Add(ids[i], "peer", func() { aborted.Add(1) })
	}
	r.Remove(ids[0])
	r.CloseAll()
	if n := aborted.Load(); n != 4 {
		t.Fatalf("CloseAll ended %d connections, want 4", n)
	}
	if !r.Add(router.NewConnID(), "late", func() { aborted.Add(1) }) {
		t.Fatal("Add refused after CloseAll")
	}
	r.Close()
	if n := aborted.Load(); n != 9 {
		t.Fatalf("Close ended %d connections in all, want 9", n)
	}
	if r.Add(router.NewConnID(), "after close", func() {}) {
		t.Fatal("Add accepted after Close")
	}
}

// Begin and End do not allocate: a request's bookkeeping stays free on the hot path.
func TestInflightAllocs(t *testing.T) {
	var r router.Peers[int]
	if n := testing.AllocsPerRun(100, func() {
		r.Begin()
		r.End()
	}); n != 0 {
		t.Fatalf("Begin+End allocate %.1f times", n)
	}
}
