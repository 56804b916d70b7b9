package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConnRequests(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		p := newPair(t, HandlerFunc(echo), Options{})
		steps := []struct{ send, want string }{
			{`{"jsonrpc":"2.0","id":0,"method":"echo","params":{"a":[1,2]}}`, `{"jsonrpc":"2.0","id":0,"result":{"a":[1,2]}}`},
			{`{"jsonrpc":"2.0","id":"abc","method":"echo","params":["<&>"]}`, `{"jsonrpc":"2.0","id":"abc","result":["<&>"]}`},
			{`{"jsonrpc":"2.0","id":1.50,"method":"nil"}`, `{"jsonrpc":"2.0","id":1.50,"result":null}`},
			{`{"jsonrpc":"2.0","id":null,"method":"nil"}`, `{"jsonrpc":"2.0","id":null,"result":null}`},
			{`{"jsonrpc":"2.0","id":2,"method":"rpc_error"}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Session not found","data":{"session_id":"s1"}}}`},
			{`{"jsonrpc":"2.0","id":3,"method":"plain_error"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`},
			{`{"jsonrpc":"2.0","id":4,"method":"panic"}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}`},
			{`{"jsonrpc":"2.0","id":5,"method":"bad_result"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"Internal error"}}`},
			// Notifications (valid or failing) get no reply: the next line is the following request's response.
			{`{"jsonrpc":"2.0","method":"plain_error"}` + "\n" + `{"jsonrpc":"2.0","method":"echo"}` + "\n" +
				`{"jsonrpc":"2.0","id":6,"method":"echo"}`, `{"jsonrpc":"2.0","id":6,"result":null}`},
		}
		for _, s := range steps {
			p.send(s.send)
			if got := p.recv(); got != s.want {
				t.Errorf("sent %s\n got  %s\n want %s", s.send, got, s.want)
			}
		}
	})
}

func TestConnInvalidFrames(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		p := newPair(t, HandlerFunc(echo), Options{})
		steps := []struct{ send, want string }{
			{`{"jsonrpc":"2.0",`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
			{`[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + msgBatch + `"}}`},
			{`{"jsonrpc":"2.0","id":7,"method":"echo","params":null}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"` + msgParams + `"}}`},
			{`{"jsonrpc":"2.0","method":"echo","params":null}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + msgParams + `"}}`},
			{`{"jsonrpc":"2.0","id":8,"method":null}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + msgMethodType + `"}}`},
			// An invalid response and a response to an unknown id are dropped without a reply.
			{`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}` + "\n" +
				`{"jsonrpc":"2.0","id":"zc-out-99","result":1}` + "\n" +
				`{"jsonrpc":"2.0","id":9,"method":"echo"}`, `{"jsonrpc":"2.0","id":9,"result":null}`},
		}
		for _, s := range steps {
			p.send(s.send)
			if got := p.recv(); got != s.want {
				t.Errorf("sent %s\n got  %s\n want %s", s.send, got, s.want)
			}
		}
	})
}

func TestConnFrameTooLarge(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		const max = 4096
		for _, extra := range []int{1, 3 << 20} { // max+1 exactly, and a line far past the limit
			t.Run(fmt.Sprint("extra=", extra), func(t *testing.T) {
				p := newPair(t, HandlerFunc(echo), Options{MaxFrameBytes: max})
				p.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
				if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":null}` {
					t.Fatalf("got %s", got)
				}
				line := `{"jsonrpc":"2.0","id":2,"method":"echo","params":["` // padded to max+extra bytes
				line += strings.Repeat("x", max+extra-len(line)-3) + `"]}`
				wrote := make(chan error, 1)
				go func() { // the server stops reading mid-line; a large write only completes if it drains
					err := p.end.write(line + "\n")
					wrote <- err
				}()
				want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: frame too large","data":{"reason":"frame_too_large","limit_bytes":4096}}}`
				if got := p.recv(); got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
				p.recvEOF()
				_ = p.end.close() // lets the server's linger end
				if err := p.serveResult(); !errors.Is(err, ErrFrameTooLarge) {
					t.Errorf("Serve = %v, want ErrFrameTooLarge", err)
				}
				<-wrote
			})
		}
	})
}

func TestConnFrameTimeout(t *testing.T) {
	p := newPair(t, HandlerFunc(echo), Options{FrameTimeout: 200 * time.Millisecond})
	// Idle time between frames is not limited: wait well past the frame timeout, then talk.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":null}` {
		t.Fatalf("got %s", got)
	}
	time.Sleep(600 * time.Millisecond)
	_, _ = io.WriteString(p.client, "\n   \n") // blank lines are not frame starts either
	time.Sleep(600 * time.Millisecond)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"echo"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":2,"result":null}` {
		t.Fatalf("idle connection: got %s", got)
	}
	// An unfinished frame is answered with frame_timeout, then EOF.
	if _, err := io.WriteString(p.client, `{"jsonrpc":"2.0","id":3,`); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: frame not finished in time","data":{"reason":"frame_timeout","limit_ms":200}}}`
	if got := p.recv(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p.recvEOF()
	_ = p.client.Close()
	if err := p.serveResult(); !errors.Is(err, ErrFrameTimeout) {
		t.Errorf("Serve = %v, want ErrFrameTimeout", err)
	}
}

func TestConnWriteStall(t *testing.T) {
	const maxQueue = 64 << 10
	turnCancelled := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
		<-ctx.Done() // a long turn: it must be cancelled when the stalled peer is dropped
		close(turnCancelled)
		return nil, ctx.Err()
	})
	p := newPair(t, h, Options{WriteTimeout: 300 * time.Millisecond, MaxQueueBytes: maxQueue,
		Concurrent: func(string) bool { return true }})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`)

	// The client never reads. Notify until the connection gives up; the queue must stay bounded.
	payload := map[string]string{"text": strings.Repeat("y", 4000)}
	var sent, maxSeen int
	for {
		err := p.srv.Notify("session/update", payload)
		if q := p.srv.q.queued(); q > maxSeen {
			maxSeen = q
		}
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("Notify = %v, want ErrClosed", err)
			}
			break
		}
		sent++
	}
	if maxSeen > maxQueue {
		t.Errorf("queued %d bytes, bound is %d", maxSeen, maxQueue)
	}
	if sent < 10 {
		t.Errorf("only %d notifications accepted before close; the socket buffer should take some", sent)
	}
	<-p.srv.Done()
	<-turnCancelled
	if err := p.serveResult(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Serve = %v, want a write deadline error", err)
	}
	if err := p.srv.Notify("x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after close = %v", err)
	}
}

// A client closed for a write stall still gets what was queued for it before the close: the connection stops
// reading and cancels its handlers at once, but flushes its queue (the torn frame first) for one more write
// timeout, so a client that resumes reading in time receives every reply, then EOF.
func TestConnWriteStallFlushesQueued(t *testing.T) {
	const n = 100
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
		return map[string]string{"pad": strings.Repeat("r", 16<<10)}, nil // 100 of them overflow the socket buffers
	})
	// The final flush gets one more WriteTimeout, in which the test must read ~1.6 MB and parse every reply: 1 s
	// was not enough under -race on a loaded 2-core machine (a load average of 12-19 failed it every time).
	p := newPair(t, h, Options{WriteTimeout: 4 * time.Second, Concurrent: func(string) bool { return true }})
	var reqs strings.Builder
	for i := range n {
		fmt.Fprintf(&reqs, `{"jsonrpc":"2.0","id":%d,"method":"m"}`+"\n", i)
	}
	p.send(strings.TrimSuffix(reqs.String(), "\n"))
	// The client does not read until the connection has given up on it.
	eventually(t, "the stall close", p.srv.isClosed)
	want := `{"jsonrpc":"2.0","id":%d,"result":{"pad":"` + strings.Repeat("r", 16<<10) + `"}}`
	seen := map[string]bool{}
	for range n {
		line := p.recv()
		id := string(frame(t, line)["id"])
		if line != fmt.Sprintf(want, mustAtoi(t, id)) || seen[id] {
			t.Fatalf("reply %d: %.80q", len(seen), line)
		}
		seen[id] = true
	}
	p.recvEOF()
	_ = p.client.Close()
	if err := p.serveResult(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Serve = %v, want the write stall", err)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

func TestConnCall(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		p := newPair(t, HandlerFunc(echo), Options{})
		type res struct {
			raw json.RawMessage
			err error
		}
		call := func(ctx context.Context, method string, params any) chan res {
			ch := make(chan res, 1)
			go func() {
				raw, err := p.srv.Call(ctx, method, params)
				ch <- res{raw, err}
			}()
			return ch
		}
		ctx := t.Context()

		// Success, with the request shape checked on the wire.
		r0 := call(ctx, "elicitation/create", map[string]string{"sessionId": "s1"})
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":"zc-out-0","method":"elicitation/create","params":{"sessionId":"s1"}}` {
			t.Fatalf("outbound request = %s", got)
		}
		// Our own zc-out-0 request is unrelated to the daemon's: correlation is per direction.
		p.send(`{"jsonrpc":"2.0","id":"zc-out-0","method":"echo","params":[1]}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":"zc-out-0","result":[1]}` {
			t.Fatalf("got %s", got)
		}
		p.send(`{"jsonrpc":"2.0","id":"zc-out-0","result":{"action":"accept"}}`)
		if r := <-r0; r.err != nil || string(r.raw) != `{"action":"accept"}` {
			t.Errorf("Call = %s, %v", r.raw, r.err)
		}

		// result:null is a success.
		r1 := call(ctx, "m", nil)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":"zc-out-1","method":"m"}` {
			t.Fatalf("outbound request = %s", got)
		}
		p.send(`{"jsonrpc":"2.0","id":"zc-out-1","result":null}`)
		if r := <-r1; r.err != nil || string(r.raw) != `null` {
			t.Errorf("Call = %s, %v; want null, nil", r.raw, r.err)
		}

		// Error response; an unknown id before it is ignored.
		r2 := call(ctx, "m", []int{1})
		p.recv()
		p.send(`{"jsonrpc":"2.0","id":"zc-out-77","result":1}`,
			`{"jsonrpc":"2.0","id":"zc-out-2","error":{"code":-32601,"message":"Unknown method: m","data":[1]}}`)
		r := <-r2
		var rpcErr *Error
		if !errors.As(r.err, &rpcErr) || rpcErr.Code != -32601 || rpcErr.Message != "Unknown method: m" {
			t.Fatalf("Call err = %v, want -32601", r.err)
		}
		if d, _ := json.Marshal(rpcErr.Data); string(d) != `[1]` {
			t.Errorf("error data = %s", d)
		}

		// Cancellation removes the call from the pending map; a late answer is then ignored.
		cctx, cancel := context.WithCancel(ctx)
		r3 := call(cctx, "m", nil)
		p.recv()
		cancel()
		if r := <-r3; !errors.Is(r.err, context.Canceled) {
			t.Errorf("cancelled Call err = %v", r.err)
		}
		p.srv.mu.Lock()
		n := len(p.srv.pending)
		p.srv.mu.Unlock()
		if n != 0 {
			t.Errorf("%d pending calls after cancel", n)
		}
		p.send(`{"jsonrpc":"2.0","id":"zc-out-3","result":1}`, `{"jsonrpc":"2.0","id":10,"method":"nil"}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":10,"result":null}` {
			t.Errorf("got %s", got)
		}

		// A pending call fails with ErrClosed when the peer disconnects, and later calls fail fast.
		r4 := call(ctx, "m", nil)
		p.recv()
		_ = p.end.close()
		if r := <-r4; !errors.Is(r.err, ErrClosed) {
			t.Errorf("Call on disconnect = %v, want ErrClosed", r.err)
		}
		<-p.srv.Done()
		if _, err := p.srv.Call(ctx, "m", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Call after close = %v", err)
		}
	})
}

func TestConnCallTimeoutOption(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		p := newPair(t, HandlerFunc(echo), Options{CallTimeout: 50 * time.Millisecond})
		_, err := p.srv.Call(t.Context(), "never/answered", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Call = %v, want DeadlineExceeded", err)
		}
	})
}

// A sequential handler that calls back to the peer must get its answer: the reader keeps reading.
func TestConnCallFromSequentialHandler(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
			return c.Call(ctx, "elicitation/create", nil)
		})
		p := newPair(t, h, Options{})
		p.send(`{"jsonrpc":"2.0","id":1,"method":"ask"}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":"zc-out-0","method":"elicitation/create"}` {
			t.Fatalf("got %s", got)
		}
		p.send(`{"jsonrpc":"2.0","id":"zc-out-0","result":{"action":"decline"}}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}` {
			t.Errorf("got %s", got)
		}
	})
}

func TestConnOrderedAndConcurrentDispatch(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
			mu.Lock()
			order = append(order, string(req.ID))
			mu.Unlock()
			if req.Method == "block" {
				<-release
			}
			return req.Method, nil
		})
		p := newPair(t, h, Options{Concurrent: func(m string) bool { return m == "cancel" }})
		lines := []string{`{"jsonrpc":"2.0","id":1,"method":"block"}`}
		for i := 2; i <= 20; i++ {
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"seq"}`, i))
		}
		p.send(lines...)
		// The sequential queue is stuck behind "block"; the concurrent "cancel" is still handled and answered.
		p.send(`{"jsonrpc":"2.0","id":99,"method":"cancel"}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":99,"result":"cancel"}` {
			t.Fatalf("first response = %s, want the concurrent one", got)
		}
		close(release)
		for i := 1; i <= 20; i++ {
			m := "seq"
			if i == 1 {
				m = "block"
			}
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%q}`, i, m)
			if got := p.recv(); got != want {
				t.Fatalf("response %d = %s, want %s", i, got, want)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		var seqOrder []string
		for _, id := range order {
			if id != "99" {
				seqOrder = append(seqOrder, id)
			}
		}
		for i, id := range seqOrder {
			if id != fmt.Sprint(i+1) {
				t.Fatalf("sequential handling order = %v", seqOrder)
			}
		}
	})
}

func TestConnSequentialBackpressure(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		release := make(chan struct{})
		var handled atomic.Int32
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
			if handled.Add(1) == 1 {
				<-release
			}
			return nil, nil
		})
		p := newPair(t, h, Options{})
		const n = 200
		var lines []string
		for i := 1; i <= n; i++ {
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`, i))
		}
		p.send(lines...)
		// One request is in the handler and the queue is full; the reader waits instead of buffering more.
		eventually(t, "a full sequential queue", func() bool {
			return handled.Load() >= 1 && len(p.srv.seq) == cap(p.srv.seq)
		})
		if got := handled.Load(); got != 1 {
			t.Errorf("handled %d requests while the first blocks, want 1", got)
		}
		if cap(p.srv.seq) != maxQueuedRequests {
			t.Errorf("queue capacity %d", cap(p.srv.seq))
		}
		close(release)
		for i := 1; i <= n; i++ {
			if got, want := p.recv(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":null}`, i); got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		}
	})
}

// A client that sends its requests and half-closes still gets every response, then EOF.
func TestConnPeerHalfClose(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		p := newPair(t, HandlerFunc(echo), Options{})
		p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`, `{"jsonrpc":"2.0","id":2,"method":"nil"}`)
		if err := p.end.closeWrite(); err != nil {
			t.Fatal(err)
		}
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":[1]}` {
			t.Errorf("got %s", got)
		}
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":2,"result":null}` {
			t.Errorf("got %s", got)
		}
		p.recvEOF()
		if err := p.serveResult(); err != nil {
			t.Errorf("Serve = %v, want nil on peer EOF", err)
		}
	})
}

func TestConnCloseAndContext(t *testing.T) {
	t.Run("close before serve", func(t *testing.T) {
		server, client := socketPair(t)
		defer client.Close()
		c := NewConn(NewStream(server), HandlerFunc(echo), Options{})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal("second Close:", err)
		}
		<-c.Done()
		if err := c.Serve(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("Serve after Close = %v", err)
		}
		if err := c.Notify("m", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Notify = %v", err)
		}
		if _, err := c.Call(t.Context(), "m", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Call = %v", err)
		}
	})
	t.Run("close flushes queued frames and cancels handlers", func(t *testing.T) {
		started := make(chan struct{})
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
			close(started)
			<-ctx.Done()
			_ = c.Notify("session/update", map[string]string{"type": "turn_complete"})
			return map[string]string{"outcome": "cancelled"}, nil
		})
		p := newPair(t, h, Options{})
		p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`)
		<-started
		_ = p.srv.Close()
		if got := p.recv(); got != `{"jsonrpc":"2.0","method":"session/update","params":{"type":"turn_complete"}}` {
			t.Errorf("got %s", got)
		}
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":{"outcome":"cancelled"}}` {
			t.Errorf("got %s", got)
		}
		p.recvEOF()
		if err := p.serveResult(); err != nil {
			t.Errorf("Serve = %v", err)
		}
	})
	t.Run("ctx cancel stops serve", func(t *testing.T) {
		server, client := socketPair(t)
		defer client.Close()
		c := NewConn(NewStream(server), HandlerFunc(echo), Options{})
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- c.Serve(ctx) }()
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve = %v", err)
		}
		<-c.Done()
		if err := c.Serve(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("second Serve = %v", err)
		}
	})
}

func TestConnNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		server, client := socketPair(t)
		defer client.Close()
		blocked := make(chan struct{})
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
			if req.Method == "wait" {
				close(blocked)
				<-ctx.Done()
			}
			return nil, nil
		})
		c := NewConn(NewStream(server), h, Options{Concurrent: func(m string) bool { return m == "wait" }})
		errc := make(chan error, 1)
		go func() { errc <- c.Serve(t.Context()) }()
		_, _ = io.WriteString(client, `{"jsonrpc":"2.0","id":1,"method":"wait"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"x"}`+"\n")
		<-blocked
		callErr := make(chan error, 1)
		go func() { _, err := c.Call(t.Context(), "never", nil); callErr <- err }()
		go func() { _ = c.Notify("n", nil) }()
		_ = client.Close()
		if err := <-callErr; !errors.Is(err, ErrClosed) {
			t.Errorf("Call = %v", err)
		}
		<-errc
		<-c.Done()
	}()
	checkNoLeak(t, base)
}

func TestWriteRefusal(t *testing.T) {
	server, client := socketPair(t)
	defer client.Close()
	err := WriteRefusal(server, NewError(-32004, "Too many connections", map[string]any{"reason": "connection_limit", "limit": 2}))
	if err != nil {
		t.Fatal(err)
	}
	_ = server.Close()
	_ = client.SetReadDeadline(time.Now().Add(safety))
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32004,"message":"Too many connections","data":{"limit":2,"reason":"connection_limit"}}}` + "\n"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if Classify([]byte(strings.TrimSpace(string(got)))).Response == nil {
		t.Error("refusal is not a valid response frame")
	}
}

// Inline requests skip the dispatcher only when nothing sequential is pending: behind a blocked sequential
// request they wait their turn, so arrival order is kept; on an idle connection they run on the reader.
func TestConnInlineKeepsOrder(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
			mu.Lock()
			order = append(order, string(req.ID))
			mu.Unlock()
			if req.Method == "block" {
				<-release
			}
			return req.Method, nil
		})
		p := newPair(t, h, Options{Inline: func(m string) bool { return m == "fast" }})
		p.send(`{"jsonrpc":"2.0","id":1,"method":"fast"}`)
		if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":"fast"}` {
			t.Fatalf("idle inline request: %s", got)
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"block"}`, `{"jsonrpc":"2.0","id":3,"method":"fast"}`,
			`{"jsonrpc":"2.0","id":4,"method":"seq"}`, `{"jsonrpc":"2.0","id":5,"method":"fast"}`)
		close(release)
		for i, m := range []string{"block", "fast", "seq", "fast"} {
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%q}`, i+2, m)
			if got := p.recv(); got != want {
				t.Fatalf("response %d = %s, want %s", i+2, got, want)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(order, ",") != "1,2,3,4,5" {
			t.Fatalf("handling order %v", order)
		}
	})
}

// Frames produced concurrently by many goroutines (direct writes and queued ones) are never interleaved.
func TestConnConcurrentNotifyFramesIntact(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) { return nil, nil })
		p := newPair(t, h, Options{})
		const writers, each = 8, 200
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					if err := p.srv.Notify("n", map[string]any{"w": w, "i": i, "pad": strings.Repeat("x", 512)}); err != nil {
						t.Errorf("notify: %v", err)
						return
					}
				}
			}(w)
		}
		next := make([]int, writers)
		for n := 0; n < writers*each; n++ {
			var f struct {
				Params struct{ W, I int } `json:"params"`
			}
			line := p.recv()
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("frame %d is not intact JSON: %v", n, err)
			}
			if f.Params.I != next[f.Params.W] {
				t.Fatalf("writer %d: got frame %d, want %d (per-producer order broken)", f.Params.W, f.Params.I, next[f.Params.W])
			}
			next[f.Params.W]++
		}
		wg.Wait()
	})
}

// What a handler defers with AfterReply goes out after its response: a subscription's first notification never
// overtakes the answer that names it.
func TestConnAfterReplyFollowsTheResponse(t *testing.T) {
	forEachFramer(t, func(t *testing.T, newPair pairMaker) {
		h := HandlerFunc(func(_ context.Context, c *Conn, req *Request) (any, error) {
			req.AfterReply(func() { _ = c.Notify("started", map[string]int{"n": 1}) })
			return "subscribed", nil
		})
		p := newPair(t, h, Options{})
		for i := range 20 {
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sub"}`, i))
			if got, want := p.recv(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"subscribed"}`, i); got != want {
				t.Fatalf("first frame %s, want the response %s", got, want)
			}
			if got := p.recv(); got != `{"jsonrpc":"2.0","method":"started","params":{"n":1}}` {
				t.Fatalf("second frame %s, want the notification", got)
			}
		}
	})
}
