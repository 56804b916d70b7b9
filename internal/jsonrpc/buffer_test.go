package jsonrpc

import (
	"strings"
	"testing"
	"time"
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

// A socket connection waiting for its next frame holds no read buffer at all: it waits for the socket to be
// readable first and takes a buffer (from a shared pool) only when bytes arrived, so a thousand idle clients do
// not hold a thousand buffers.
func TestIdleSocketConnHoldsNoReadBuffer(t *testing.T) {
	p := newPair(t, HandlerFunc(echo), Options{})
	reader := p.srv.f.(*socketStream).r
	for id := 1; id <= 3; id++ {
		p.send(`{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"echo","params":["small"]}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"result":["small"]}` {
			t.Fatalf("got %s", got)
		}
		deadline := time.Now().Add(3 * time.Second) // a guard against a hang, not a timing assertion
		for reader.bufferSize() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := reader.bufferSize(); n != 0 {
			t.Fatalf("after frame %d the idle connection holds a %d-byte read buffer, want none", id, n)
		}
	}
}
