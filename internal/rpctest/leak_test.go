package rpctest

import (
	"strings"
	"testing"
)

// A daemon that served connections, a turn and a client that vanished mid-request leaves no goroutine behind
// once Run has returned.
func TestDaemonLeavesNoGoroutines(t *testing.T) {
	t.Parallel()
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
	d.CheckNoGoroutines(t)
}
