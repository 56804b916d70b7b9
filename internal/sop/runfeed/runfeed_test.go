package runfeed

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

func run(i int) api.SopRunSummary {
	return api.SopRunSummary{RunID: fmt.Sprintf("run-%d", i), Status: api.SopRunRunning}
}

// A subscriber sees every change after it subscribed, in order, and nothing from before.
func TestFeedInOrder(t *testing.T) {
	h := New(8)
	h.Publish(run(0))
	s := h.Subscribe()
	for i := 1; i <= 5; i++ {
		h.Publish(run(i))
	}
	d, err := s.Next(context.Background(), 3)
	if err != nil || d.Missed != 0 || len(d.Runs) != 3 || d.Runs[0].RunID != "run-1" || d.Runs[2].RunID != "run-3" {
		t.Fatalf("first = %+v %v", d, err)
	}
	d, _ = s.Next(context.Background(), 0)
	if len(d.Runs) != 2 || d.Runs[1].RunID != "run-5" {
		t.Fatalf("second = %+v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Next(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("nothing new: %v", err)
	}
}

// A subscriber that falls more than a ring behind is told exactly how many it missed, then reads on from the
// oldest kept change.
func TestFeedLagged(t *testing.T) {
	h := New(4)
	s := h.Subscribe()
	for i := range 10 {
		h.Publish(run(i))
	}
	d, err := s.Next(context.Background(), 0)
	if err != nil || d.Missed != 6 || len(d.Runs) != 4 || d.Runs[0].RunID != "run-6" || d.Runs[3].RunID != "run-9" {
		t.Fatalf("lagged = %+v %v", d, err)
	}
}

// Next wakes on a publish from another goroutine and ends with ErrClosed after Close.
func TestFeedWakeAndClose(t *testing.T) {
	h := New(4)
	s := h.Subscribe()
	got := make(chan Delivery)
	go func() {
		d, _ := s.Next(context.Background(), 0)
		got <- d
	}()
	h.Publish(run(1))
	if d := <-got; len(d.Runs) != 1 || d.Runs[0].RunID != "run-1" {
		t.Fatalf("woken with %+v", d)
	}
	h.Close()
	if _, err := s.Next(context.Background(), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	s.Close()
	s.Close()
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("subscribers after close = %d", n)
	}
}

// A thousand subscribers that never read hold the ring and their cursors, not a copy of the feed each: the
// heap grows by far less than a thousand rings' worth while ten thousand changes are published.
func TestFeedThousandSlowSubscribersBounded(t *testing.T) {
	h := New(DefaultCapacity)
	subs := make([]*Sub, 1000)
	for i := range subs {
		subs[i] = h.Subscribe()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	big := api.SopRunSummary{RunID: string(make([]byte, 512)), Status: api.SopRunRunning}
	for range 10000 {
		h.Publish(big)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// One ring of 256 summaries of ~600 bytes is ~150 KB; a per-subscriber copy would be 1000× that.
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Fatalf("heap grew %d bytes for 1000 idle subscribers", grown)
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.Next(context.Background(), 0)
			if err != nil || d.Missed != 10000-DefaultCapacity || len(d.Runs) != DefaultCapacity {
				t.Errorf("slow subscriber got missed=%d runs=%d err=%v", d.Missed, len(d.Runs), err)
			}
			s.Close()
		}()
	}
	wg.Wait()
}
