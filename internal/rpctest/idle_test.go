package rpctest

import (
	"runtime"
	"testing"
	"time"
)

// An idle initialized connection costs the daemon one goroutine, its reader: the writer and the dispatcher run
// only while there is work. Each connection here has initialized and had a status answered before it idles.
func TestIdleConnectionRunsOneGoroutine(t *testing.T) {
	d := Start(t)
	warm := d.Dial(t) // the first connection may start daemon-wide helpers; they are not per connection
	warm.Initialize()
	warm.Send(`{"jsonrpc":"2.0","method":"status","id":1}`)
	warm.MustRecv()

	const n = 16
	before := runtime.NumGoroutine()
	for range n {
		c := d.Dial(t)
		c.Initialize()
		c.Send(`{"jsonrpc":"2.0","method":"status","id":1}`)
		c.MustRecv()
		c.Send(`{"jsonrpc":"2.0","method":"session/list","params":{},"id":2}`) // a sequential, dispatched method
		c.MustRecv()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		extra := runtime.NumGoroutine() - before
		if extra <= n {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d idle connections hold %d goroutines, want at most %d (one each):\n%s",
				n, extra, n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
