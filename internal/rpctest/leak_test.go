package rpctest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// A daemon that served connections, a turn and a client that vanished mid-request leaves no goroutine behind
// once Run has returned.
func TestDaemonLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	d := Start(t)
	for i := 0; i < 3; i++ {
		c := d.Dial(t)
		c.Initialize()
		c.Send(`{"jsonrpc":"2.0","method":"status","id":1}`)
		c.MustRecv()
	}
	c := d.Dial(t)
	c.Initialize()
	c.Send(`{"jsonrpc":"2.0","method":"session/new","params":{"session_id":"leak-1"},"id":2}`)
	c.MustRecv()
	c.Send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"session_id":"leak-1","prompt":"hello there"},"id":3}`)
	for {
		if strings.Contains(c.MustRecv(), `"id":3`) {
			break
		}
	}
	// A client that leaves with a half-written frame and one that never initializes.
	gone := d.Dial(t)
	gone.SendRaw([]byte(`{"jsonrpc":"2.0","meth`))
	gone.Conn().Close()
	d.Dial(t)
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after the daemon stopped, %d before:\n%s", runtime.NumGoroutine(), before, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
