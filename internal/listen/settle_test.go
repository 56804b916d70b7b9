package listen

import (
	"bufio"
	"testing"
	"time"
)

// Settled runs once after a burst of connections has come and gone and things are quiet, not for a few
// connections, and Shutdown waits for a call in progress.
func TestSettledAfterABurst(t *testing.T) {
	t.Parallel()
	ln, path := unixListener(t)
	calls := make(chan struct{}, 8)
	proceed := make(chan struct{})
	s := New(Options{SettleChurn: 6, SettleQuiet: time.Millisecond, SettleEvery: time.Millisecond,
		Settled: func() { calls <- struct{}{}; <-proceed }})
	go func() { _ = s.Serve(t.Context(), ln, echo) }()

	armed := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.settle != nil
	}
	burst := func(n int) {
		for i := range n {
			c := dial(t, path)
			roundTrip(t, c, bufio.NewReader(c), string(rune('a'+i)))
			c.Close()
			waitFor(t, "the client released", func() bool { return s.Clients() == 0 })
		}
	}
	burst(2) // 4 connections come or gone: below SettleChurn
	if armed() {
		t.Fatal("Settled armed after 2 connections came and went, want only after 6 events")
	}
	burst(1) // 6
	select {
	case <-calls:
	case <-time.After(safety):
		t.Fatal("Settled not called after 3 connections came and went")
	}
	shut := make(chan struct{})
	go func() {
		s.Shutdown(t.Context())
		close(shut)
	}()
	waitFor(t, "Shutdown to begin", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.shut
	})
	select { // a bounded look: Shutdown has nothing else left to wait for
	case <-shut:
		t.Fatal("Shutdown returned while Settled was still running")
	case <-time.After(100 * time.Millisecond):
	}
	close(proceed)
	<-shut
	if len(calls) != 0 {
		t.Fatalf("Settled called %d more times for one burst", len(calls))
	}
}
