package gateway

import (
	"context"
	"testing"
	"time"
)

// Shutdown cancels every tracked connection's context, waits for its handler to be done, and refuses the
// connections that come after it.
func TestWSStateShutdown(t *testing.T) {
	t.Parallel()
	var w wsState
	ctx, done, ok := w.track(t.Context())
	if !ok {
		t.Fatal("track refused before shutdown")
	}
	finished := make(chan struct{})
	go func() {
		w.shutdown(t.Context())
		close(finished)
	}()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not cancel the connection's context")
	}
	select {
	case <-finished:
		t.Fatal("shutdown returned before the handler was done")
	case <-time.After(20 * time.Millisecond):
	}
	done()
	<-finished
	if _, _, ok := w.track(t.Context()); ok {
		t.Fatal("track accepted a connection after shutdown")
	}

	// A handler that never ends holds shutdown only until its ctx ends.
	var stuck wsState
	if _, _, ok := stuck.track(t.Context()); !ok {
		t.Fatal("track refused")
	}
	sctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	stuck.shutdown(sctx)
}
