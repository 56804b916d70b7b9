package jsonrpc

import (
	"strings"
	"testing"
)

// An idle connection holds a small read buffer: it grows for a large frame and is small again once the
// connection waits for the next frame.
func TestConnReadBufferFollowsFrames(t *testing.T) {
	p := newPair(t, HandlerFunc(echo), Options{})
	reader := p.srv.f.(*socketStream).r
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":["small"]}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":["small"]}` {
		t.Fatalf("got %s", got)
	}
	if n := reader.bufferSize(); n > minReadBuffer {
		t.Errorf("after a small frame the read buffer is %d bytes, want at most %d", n, minReadBuffer)
	}
	big := strings.Repeat("b", 1<<20)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":["` + big + `"]}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":2,"result":["`+big+`"]}` {
		t.Fatalf("large frame not echoed (%d bytes)", len(got))
	}
	if n := reader.peakBufferSize(); n <= minReadBuffer {
		t.Errorf("the read buffer never grew for a 1 MiB frame (peak %d bytes)", n)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":["small"]}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":3,"result":["small"]}` {
		t.Fatalf("got %s", got)
	}
	if n := reader.bufferSize(); n > minReadBuffer {
		t.Errorf("after a large frame the idle read buffer is %d bytes, want at most %d", n, minReadBuffer)
	}
}
