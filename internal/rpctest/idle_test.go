package rpctest

import (
	"testing"
	"time"
)

// An idle initialized connection costs the daemon one goroutine (counted by the daemon's pprof label, so other
// tests may run in parallel), its reader: the writer and the dispatcher run
// only while there is work. Each connection here has initialized and had a status and a session/list answered
// before it idles.
//
// The count is the growth between two equal batches of connections, so goroutines the daemon starts once for
// itself (a listener or a database pool finishing its start on a loaded machine after the first connection was
// answered, helpers started by a first call) are in both measurements and cancel out; CI once saw one such
// goroutine counted against the connections when the baseline was taken right after a single warm-up call.
func TestIdleConnectionRunsOneGoroutine(t *testing.T) {
	t.Parallel()
	d := Start(t)
	const n = 16
	open := func() {
		for range n {
			c := d.Dial(t)
			c.Initialize()
			c.Send(`{"jsonrpc":"2.0","method":"status","id":1}`)
			c.MustRecv()
			c.Send(`{"jsonrpc":"2.0","method":"session/list","params":{},"id":2}`) // a sequential, dispatched method
			c.MustRecv()
		}
	}
	open()                  // the first batch also absorbs whatever the daemon starts once
	settled := func() int { // the count once transient goroutines (a finished request's writer...) are gone
		prev := -1
		for {
			cur := d.Goroutines()
			if cur == prev {
				return cur
			}
			prev = cur
			time.Sleep(50 * time.Millisecond)
		}
	}
	before := settled()
	open()
	deadline := time.Now().Add(10 * time.Second)
	for {
		extra := d.Goroutines() - before
		if extra <= n {
			return
		}
		if time.Now().After(deadline) {
			stacks, _ := d.goroutines()
			t.Fatalf("%d more idle connections hold %d more goroutines, want at most %d (one each):\n%s",
				n, extra, n, stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
