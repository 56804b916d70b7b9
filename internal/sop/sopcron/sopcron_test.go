package sopcron

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

type recorder struct {
	mu  sync.Mutex
	evs []sop.Event
	got chan struct{}
}

func (r *recorder) Dispatch(_ context.Context, ev sop.Event) ([]engine.Result, error) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	r.got <- struct{}{}
	return nil, nil
}

// TestWindowsFireAtMostOnce: each window fires once with its window as the key; windows skipped over by a
// long pause are not replayed; a bad expression is reported, not fatal.
func TestWindowsFireAtMostOnce(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)
	clk := clocktest.New(start)
	rec := &recorder{got: make(chan struct{}, 16)}
	s := New(Options{Dispatcher: rec, Expressions: func() []string { return []string{"* * * * *", "* * * * *", "nope"} },
		Clock: clk, Local: time.UTC})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	if !clk.WaitTimer(30*time.Second, 5*time.Second) {
		t.Fatal("no timer armed for the next window")
	}
	clk.Advance(30 * time.Second) // 10:01:00
	<-rec.got
	if !clk.WaitTimer(time.Minute, 5*time.Second) {
		t.Fatal("no timer for the window after")
	}
	clk.Advance(5 * time.Minute) // 10:06:00: windows 10:02..10:05 passed while "paused"
	<-rec.got
	select {
	case <-rec.got:
		t.Fatal("a skipped window was replayed")
	case <-time.After(50 * time.Millisecond):
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.evs) != 2 {
		t.Fatalf("events %d, want 2 (one per fired window, the expression listed twice fires once)", len(rec.evs))
	}
	if rec.evs[0].Source != "cron" || rec.evs[0].Topic != "* * * * *" || rec.evs[0].Key != "cron:* * * * *@2026-01-01T10:01:00Z" {
		t.Fatalf("first event %+v key %s", rec.evs[0], rec.evs[0].Key)
	}
	if rec.evs[1].Key != "cron:* * * * *@2026-01-01T10:02:00Z" {
		t.Fatalf("second key %s", rec.evs[1].Key)
	}
	if bad := s.Invalid(); bad["nope"] == "" {
		t.Fatalf("invalid expressions %v", bad)
	}
}
