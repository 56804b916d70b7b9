package jsonrpc

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A client that floods concurrent requests and never reads must not make the server hold an unbounded number
// of handler goroutines (each with its request and its unsent response): the reader has to push back.
func TestConnConcurrentFloodIsBounded(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
		return nil, NewError(-32000, "Session not found", nil)
	})
	base := runtime.NumGoroutine()
	p := newPair(t, h, Options{MaxQueueBytes: 4 << 10, WriteTimeout: time.Hour,
		Concurrent: func(string) bool { return true }})
	line := `{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"session_id":"x"}}` + "\n"
	batch := strings.Repeat(line, 1000)
	const batches = 30 // 30,000 requests, far more than the queue and socket buffers can answer
	written := make(chan int, 1)
	go func() {
		n := 0
		for range batches {
			_ = p.client.SetWriteDeadline(time.Now().Add(2 * time.Second))
			if _, err := p.client.Write([]byte(batch)); err != nil {
				break
			}
			n++
		}
		written <- n
	}()
	<-written
	peak := runtime.NumGoroutine() - base
	if peak > 2*maxConcurrentHandlers {
		t.Fatalf("%d goroutines held for one client that does not read", peak)
	}
}

// NewConn's contract: nothing is written until Serve runs, and Close before Serve discards what was queued.
// The direct-write fast path must not bypass that.
func TestConnNotifyBeforeServeIsNotWritten(t *testing.T) {
	server, client := socketPair(t)
	defer client.Close()
	c := NewConn(NewStream(server), HandlerFunc(echo), Options{})
	if err := c.Notify("session/update", map[string]string{"text": "early"}); err != nil {
		t.Fatalf("Notify before Serve = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	_ = client.SetReadDeadline(time.Now().Add(safety))
	b, err := io.ReadAll(client)
	if err != nil {
		t.Fatalf("client read: %v", err)
	}
	if len(b) != 0 {
		t.Fatalf("a Conn that never served wrote %q", b)
	}
}
