package rpctest

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"
)

// A daemon that stops on its own (a shutdown over the socket) keeps Run's result for everyone: a test waiting
// on Done sees it, and the cleanup's Stop returns it at once instead of timing out because Done took the only
// value.
func TestDaemonStopAfterDone(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := d.Dial(t)
	c.Initialize()
	mustResult(t, call(t, c, 1, "shutdown", map[string]any{}))
	select {
	case err := <-d.Done():
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the daemon did not stop after shutdown")
	}
	for i := range 3 {
		if err := <-d.Done(); err != nil {
			t.Fatalf("Done #%d: %v", i+2, err)
		}
		if err := d.Stop(); err != nil {
			t.Fatalf("Stop #%d after Done: %v", i+1, err)
		}
	}
	if err := d.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	done := d.Done()
	<-done
	if _, open := <-done; open {
		t.Fatal("Done's channel is not closed after its value")
	}
}

// The leak check counts the goroutines that carry this daemon's label and nothing else: not the test's, not
// another daemon's; once Run has returned none is left.
func TestDaemonGoroutinesAreItsOwn(t *testing.T) {
	t.Parallel()
	d := Start(t)
	other := Start(t)
	if d.Goroutines() == 0 {
		t.Fatal("a running daemon shows no goroutine of its own")
	}
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	spawn := func(label string) {
		go pprof.Do(t.Context(), pprof.Labels(daemonLabel, label), func(context.Context) {
			started <- struct{}{}
			<-release
		})
	}
	waitFor(t, "the daemons to settle", func() bool {
		a, b := d.Goroutines(), other.Goroutines()
		time.Sleep(50 * time.Millisecond)
		return a == d.Goroutines() && b == other.Goroutines()
	})
	before := d.Goroutines()
	spawn(d.label)
	spawn("not-" + d.label)
	<-started
	<-started
	if got := d.Goroutines(); got != before+1 {
		t.Errorf("with one more goroutine under its label the daemon shows %d, want %d", got, before+1)
	}
	close(release)
	d.CheckNoGoroutines(t)
	if other.Goroutines() == 0 {
		t.Fatal("stopping one daemon ended the other's goroutines")
	}
}
