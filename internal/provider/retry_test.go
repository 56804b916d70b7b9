package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeClock is a clock whose sleeps return at once and move time forward by the duration slept.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

// closedAddr returns the address of a TCP listener that has been closed: connecting to it is refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// countingClient dials through dial and counts the attempts.
func countingClient(n *atomic.Int32, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		return dial(ctx, network, addr)
	}}}
}

// Connection refused is retried briefly with backoff, and the error names the alias and the cause.
func TestConnectionRefusedRetriedBriefly(t *testing.T) {
	t.Parallel()
	var dials atomic.Int32
	var d net.Dialer
	clock := newFakeClock()
	p, err := New(Settings{Family: FamilyOpenAI, Alias: "dead", URI: "http://" + closedAddr(t), Model: "m",
		Client: countingClient(&dials, d.DialContext), Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(t.Context(), hi(), nil)
	if err == nil || !strings.Contains(err.Error(), "openai.dead") || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want connection refused naming openai.dead", err)
	}
	if n := dials.Load(); n != 1+DefaultMaxRetries {
		t.Fatalf("%d connection attempts, want %d", n, 1+DefaultMaxRetries)
	}
	if want := []time.Duration{DefaultRetryBase, 2 * DefaultRetryBase}; len(clock.sleeps) != 2 || clock.sleeps[0] != want[0] || clock.sleeps[1] != want[1] {
		t.Fatalf("backoff sleeps %v, want %v", clock.sleeps, want)
	}
}

// Retries share one budget of timeout_secs: a backend that keeps refusing is not retried once the next
// backoff would end past the budget, whatever MaxRetries allows, and the error says the budget was spent.
func TestRetriesShareOneBudget(t *testing.T) {
	t.Parallel()
	var dials atomic.Int32
	var d net.Dialer
	clock := newFakeClock()
	p, _ := New(Settings{Family: FamilyOpenAI, Alias: "dead", URI: "http://" + closedAddr(t), Model: "m", TimeoutSecs: 1,
		MaxRetries: 10, RetryBase: 300 * time.Millisecond, Client: countingClient(&dials, d.DialContext), Now: clock.Now, Sleep: clock.Sleep})
	_, err := p.Stream(t.Context(), hi(), nil)
	// Attempts at 0, 0.3 s and 0.9 s; the next backoff (1.2 s) would end at 2.1 s, past the 1 s budget.
	if n := dials.Load(); n != 3 {
		t.Fatalf("%d attempts, want 3 within the 1 s budget (sleeps %v)", n, clock.sleeps)
	}
	if err == nil || !strings.Contains(err.Error(), "openai.dead") || !strings.Contains(err.Error(), "timeout_secs") ||
		!strings.Contains(err.Error(), "3 attempts") || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want the cause, the alias, the attempt count and the timeout_secs budget", err)
	}
}

// Name resolution and unreachable networks are not retried at all.
func TestPermanentConnectionFailuresNotRetried(t *testing.T) {
	t.Parallel()
	for name, cause := range map[string]error{
		"dns":         &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true},
		"no route":    &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EHOSTUNREACH},
		"net unreach": &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ENETUNREACH},
	} {
		t.Run(name, func(t *testing.T) {
			var dials atomic.Int32
			p, _ := New(Settings{Family: FamilyOllama, Alias: "gone", URI: "http://nowhere.invalid:11434", Model: "m",
				RetryBase: time.Millisecond, Client: countingClient(&dials, func(context.Context, string, string) (net.Conn, error) {
					return nil, cause
				})})
			_, err := p.Stream(t.Context(), hi(), nil)
			if err == nil || !strings.Contains(err.Error(), "ollama.gone") || !errors.Is(err, cause) {
				t.Fatalf("err = %v, want %v naming ollama.gone", err, cause)
			}
			if n := dials.Load(); n != 1 {
				t.Fatalf("%d attempts, want 1", n)
			}
		})
	}
}

// A server that accepts the connection and never answers costs one timeout, not one per retry: the single
// attempt uses the whole budget and is not repeated.
func TestBlackholeCostsOneTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c) // held open, never read, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	p, _ := New(Settings{Family: FamilyAnthropic, Alias: "hole", URI: "http://" + ln.Addr().String(), Model: "m",
		IdleTimeout: 200 * time.Millisecond, RetryBase: time.Millisecond})
	_, err = p.Stream(t.Context(), hi(), nil)
	if !errors.Is(err, ErrIdleTimeout) || !strings.Contains(err.Error(), "anthropic.hole") {
		t.Fatalf("err = %v, want the idle timeout naming anthropic.hole", err)
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d connections accepted, want 1: a silent backend must not be retried past the budget", n)
	}
}
