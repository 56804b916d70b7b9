package rpctest

import (
	"strings"
	"testing"
)

// A client that stops reading must not hold the daemon's shutdown past the drain (protocol.md §2.1: "5.5 s,
// then connections are closed"), even when the write timeout is much longer than that.
func TestShutdownClosesStalledClientAfterDrain(t *testing.T) {
	d := Start(t, withRPC("write_timeout_ms = 3600000\n"))
	c := d.Dial(t)
	c.Initialize()
	// Far more replies than the socket buffers hold; the client never reads them, so the writer blocks.
	req := `{"jsonrpc":"2.0","method":"health","id":1}` + "\n"
	c.SendRaw([]byte(strings.Repeat(req, 5000)))
	// Stop fails if Run has not returned within 15 s; the daemon must not wait for the write timeout.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
}
