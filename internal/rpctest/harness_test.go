package rpctest

import (
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
