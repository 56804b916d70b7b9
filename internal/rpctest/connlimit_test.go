package rpctest

import (
	"errors"
	"io"
	"testing"
	"time"
)

// A refused connection sees its -32004 frame and then a clean EOF (protocol.md §2.1), even when it already sent
// its initialize: closing a socket with unread input would reset the connection instead.
func TestConnectionLimitRefusalEndsWithEOF(t *testing.T) {
	t.Parallel()
	d := Start(t, withRPC("max_local_connections = 1\n"))
	a := d.Dial(t)
	a.Initialize()
	for i := range 20 {
		over := d.Dial(t)
		// The client speaks first, as real clients do; the write may lose the race with the refusal.
		_, _ = over.Conn().Write([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}` + "\n"))
		code, _ := errorOf(t, over.MustRecv())
		if code != -32004 {
			t.Fatalf("attempt %d: code %d, want -32004", i, code)
		}
		if _, err := over.Recv(10 * time.Second); !errors.Is(err, io.EOF) {
			t.Fatalf("attempt %d: after the refusal got %v, want EOF", i, err)
		}
		over.Conn().Close()
	}
}
