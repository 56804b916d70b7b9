package jsonrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// countingConn counts the Write calls made on a real socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// Frames found queued by the writer leave in one write, in order; a frame sent alone is written at once by
// itself.
func TestConnCoalescesQueuedFrames(t *testing.T) {
	srv, cli := socketPair(t)
	cc := &countingConn{Conn: srv}
	c := NewConn(NewStream(cc), HandlerFunc(echo), Options{})
	const n = 50
	for i := range n { // before Serve every frame waits in the queue
		if err := c.Notify("tick", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- c.Serve(ctx) }()
	br := bufio.NewReader(cli)
	for i := range n {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}`+"\n", i); line != want {
			t.Fatalf("frame %d = %q, want %q", i, line, want)
		}
	}
	if got := cc.writes.Load(); got != 1 {
		t.Fatalf("%d queued frames took %d writes, want 1", n, got)
	}
	// Alone, a frame goes out by itself and at once: the peer reads it without anything else being sent.
	if err := c.Notify("tock", nil); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != `{"jsonrpc":"2.0","method":"tock"}`+"\n" {
		t.Fatalf("lone frame: %q, %v", line, err)
	}
	if got := cc.writes.Load(); got != 2 {
		t.Fatalf("writes after the lone frame = %d, want 2", got)
	}
	_ = c.Close()
	<-served
}

// tearOnceConn makes its first write of more than one frame stop after cut bytes with a write-deadline error, as
// a stalled peer would.
type tearOnceConn struct {
	net.Conn
	cut  int
	torn atomic.Bool
}

func (c *tearOnceConn) Write(p []byte) (int, error) {
	if len(p) > c.cut && c.torn.CompareAndSwap(false, true) {
		n, _ := c.Conn.Write(p[:c.cut])
		return n, os.ErrDeadlineExceeded
	}
	return c.Conn.Write(p)
}

// A stall in the middle of a coalesced write leaves the rest of the torn frame and the frames after it first in
// the queue: the final flush sends them, so the peer reads every frame once, in order, then EOF.
func TestConnCoalescedWriteTornByStall(t *testing.T) {
	srv, cli := socketPair(t)
	const n = 20
	frameLen := len(`{"jsonrpc":"2.0","method":"tick","params":{"i":10}}` + "\n")
	tc := &tearOnceConn{Conn: srv, cut: 12*frameLen + 7} // inside frame 12 (ids 10..19 have that length)
	c := NewConn(NewStream(tc), HandlerFunc(echo), Options{WriteTimeout: 5 * time.Second})
	for i := range n {
		if err := c.Notify("tick", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve(context.Background()) }()
	br := bufio.NewReader(cli)
	for i := range n {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}`+"\n", i); line != want {
			t.Fatalf("frame %d = %q, want %q", i, line, want)
		}
	}
	if rest, err := br.ReadString('\n'); err != io.EOF || rest != "" {
		t.Fatalf("after the frames: %q, %v; want EOF", rest, err)
	}
	if !tc.torn.Load() {
		t.Fatal("the write was never torn")
	}
	_ = cli.Close()
	if err := <-served; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Serve = %v, want the write stall", err)
	}
}
