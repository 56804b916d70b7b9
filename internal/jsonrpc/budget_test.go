package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// acquireAsync starts an acquire and returns a channel that reports its result.
func acquireAsync(b *Budget, stop <-chan struct{}, held, n int64) chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := b.acquire(stop, held, n)
		ch <- err
	}()
	return ch
}

func waiting(b *Budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

func pending(ch chan error) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

func TestBudgetWaitsAndServesLargestHolderFirst(t *testing.T) {
	b := NewBudget(100)
	for _, n := range []int64{60, 30} { // a frame being handled holds 60, a frame under way 30
		if waited, err := b.acquire(nil, 0, n); waited || err != nil {
			t.Fatalf("acquire %d: waited %v, %v", n, waited, err)
		}
	}
	small := acquireAsync(b, nil, 0, 50) // a new frame
	eventually(t, "the first waiter", func() bool { return waiting(b) == 1 })
	large := acquireAsync(b, nil, 30, 50) // the frame under way asks for more
	eventually(t, "the second waiter", func() bool { return waiting(b) == 2 })
	if !pending(small) || !pending(large) {
		t.Fatal("a reader went past the budget while a handled frame could still release")
	}
	b.release(60) // 30 used: the frame under way goes first although it asked later
	if err := <-large; err != nil {
		t.Fatal(err)
	}
	if !pending(small) || b.Used() != 80 {
		t.Fatalf("used %d, small granted %v; want 80 and small still waiting", b.Used(), !pending(small))
	}
	b.release(80)
	if err := <-small; err != nil || b.Used() != 50 {
		t.Fatalf("small: %v, used %d", err, b.Used())
	}
	if b.Peak() != 90 {
		t.Fatalf("peak %d, want 90", b.Peak())
	}
}

// When every charged byte belongs to a reader that waits for more, nothing would ever be released: the largest
// holder is let through past the limit instead of deadlocking.
func TestBudgetNeverDeadlocks(t *testing.T) {
	b := NewBudget(100)
	var chans []chan error
	for _, held := range []int64{40, 60} {
		if _, err := b.acquire(nil, 0, held); err != nil {
			t.Fatal(err)
		}
	}
	chans = append(chans, acquireAsync(b, nil, 40, 30))
	eventually(t, "one waiter", func() bool { return waiting(b) == 1 })
	if !pending(chans[0]) {
		t.Fatal("granted while another reader still reads")
	}
	chans = append(chans, acquireAsync(b, nil, 60, 30)) // now both holders wait: the larger goes
	if err := <-chans[1]; err != nil {
		t.Fatal(err)
	}
	if !pending(chans[0]) || b.Used() != 130 {
		t.Fatalf("used %d; want 130 with the smaller holder still waiting", b.Used())
	}
	b.release(90) // the larger frame is done
	if err := <-chans[0]; err != nil || b.Used() != 70 {
		t.Fatalf("%v, used %d", err, b.Used())
	}
	// A single request larger than the whole budget, with nothing else charged, also goes through.
	b2 := NewBudget(10)
	if _, err := b2.acquire(nil, 0, 50); err != nil {
		t.Fatal(err)
	}
}

func TestBudgetStop(t *testing.T) {
	b := NewBudget(10)
	if _, err := b.acquire(nil, 0, 10); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	ch := acquireAsync(b, stop, 0, 5)
	eventually(t, "the waiter", func() bool { return waiting(b) == 1 })
	close(stop)
	if err := <-ch; !errors.Is(err, errStopped) {
		t.Fatalf("got %v, want errStopped", err)
	}
	if waiting(b) != 0 || b.Used() != 10 {
		t.Fatalf("a stopped waiter left %d waiters, used %d", waiting(b), b.Used())
	}
	var nilBudget *Budget
	nilBudget.release(5) // a nil Budget charges nothing and releases nothing
}

// Memory is handed back to the system after large frames only, once for a burst, and not after Close.
func TestBudgetTrim(t *testing.T) {
	var trims atomic.Int32
	b := NewBudget(64 << 20)
	b.freeOSMemory = func() { trims.Add(1) }
	b.release(trimFrameBytes - 1)
	for range 3 {
		if _, err := b.acquire(nil, 0, trimFrameBytes); err != nil {
			t.Fatal(err)
		}
		b.release(trimFrameBytes)
	}
	eventually(t, "a trim", func() bool { return trims.Load() == 1 })
	b.mu.Lock()
	pendingTrim := b.trim != nil
	b.mu.Unlock()
	if pendingTrim {
		t.Fatal("a burst scheduled a second trim before any new large frame")
	}
	b.release(trimFrameBytes) // a later large frame: one more trim, rate limited
	b.Close()
	b.mu.Lock()
	pendingTrim = b.trim != nil
	b.mu.Unlock()
	if pendingTrim {
		t.Fatal("Close left a trim pending")
	}
}

// Many connections sending large frames at once through one small Budget: each frame is answered, the charged
// bytes never exceed the budget by more than one frame's buffer, and everything is released at the end.
func TestConnBudgetBoundsFramesInFlight(t *testing.T) {
	const (
		budget   = 1 << 20
		frame    = 600 << 10
		frameBuf = 1 << 20 // the buffer of such a frame: capacity grows by doubling
		conns    = 12
	)
	b := NewBudget(budget)
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
		time.Sleep(time.Millisecond) // hold the frame a little, so the readers contend
		return len(req.Params), nil
	})
	params := `["` + strings.Repeat("x", frame) + `"]`
	line := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + params + "}\n"
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":%d}`, len(params)) + "\n"
	var wg sync.WaitGroup
	for range conns {
		p := newPair(t, h, Options{Budget: b})
		wg.Go(func() {
			_ = p.client.SetDeadline(time.Now().Add(safety))
			go func() { _, _ = io.WriteString(p.client, line) }()
			if got, err := p.br.ReadString('\n'); err != nil || got != want {
				t.Errorf("got %q, %v", got, err)
			}
		})
	}
	wg.Wait()
	if p := b.Peak(); p > budget+frameBuf || p < frame {
		t.Errorf("peak charge %d bytes; want at least one frame (%d) and at most the budget plus one frame buffer (%d)",
			p, frame, budget+frameBuf)
	}
	eventually(t, "every frame released", func() bool { return b.Used() == 0 })
}

// While a reader waits for the budget it does not read, and that wait does not count against the frame
// timeout: the waiting client's frame is served, not refused with frame_timeout.
func TestConnBudgetWaitIsNotAFrameTimeout(t *testing.T) {
	b := NewBudget(256 << 10)
	hold := make(chan struct{})
	entered := make(chan string, 2)
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) (any, error) {
		entered <- req.Method
		if req.Method == "hold" {
			<-hold
		}
		return nil, nil
	})
	opts := Options{Budget: b, FrameTimeout: 100 * time.Millisecond}
	first, second := newPair(t, h, opts), newPair(t, h, opts)
	pad := strings.Repeat("x", 300<<10)
	go func() {
		_, _ = io.WriteString(first.client, `{"jsonrpc":"2.0","id":1,"method":"hold","params":["`+pad+`"]}`+"\n")
	}()
	if m := <-entered; m != "hold" {
		t.Fatalf("handler got %s", m)
	}
	go func() {
		_, _ = io.WriteString(second.client, `{"jsonrpc":"2.0","id":2,"method":"next","params":["`+pad+`"]}`+"\n")
	}()
	eventually(t, "the second reader to wait", func() bool { return waiting(b) == 1 })
	time.Sleep(300 * time.Millisecond) // three frame timeouts spent waiting for the budget
	select {
	case m := <-entered:
		t.Fatalf("%s was handled while the budget was exhausted", m)
	default:
	}
	close(hold)
	if got := first.recv(); got != `{"jsonrpc":"2.0","id":1,"result":null}` {
		t.Fatalf("first: %s", got)
	}
	if got := second.recv(); got != `{"jsonrpc":"2.0","id":2,"result":null}` {
		t.Fatalf("second: %s", got)
	}
}
