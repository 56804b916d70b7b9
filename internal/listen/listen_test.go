package listen

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// safety bounds every blocking wait so a bug fails the test instead of hanging it; it is never asserted on.
const safety = 10 * time.Second

func unixListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "zcl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, path
}

func dial(t *testing.T, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(safety))
	return c
}

// echo answers each line with the same line until the peer leaves or ctx ends.
func echo(ctx context.Context, nc net.Conn) {
	stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	r := bufio.NewReader(nc)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := io.WriteString(nc, line); err != nil {
			return
		}
	}
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("echo of %q: %q, %v", line, got, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A connection past the limit reads the -32004 frame and then EOF, not a reset, even though it had already sent
// its initialize; a slot freed by a leaving client is given to the next one.
func TestLimitRefusesWithFrameThenEOF(t *testing.T) {
	t.Parallel()
	ln, path := unixListener(t)
	s := New(Options{MaxConns: func() int { return 1 }})
	go func() { _ = s.Serve(t.Context(), ln, echo) }()
	t.Cleanup(func() { s.Shutdown(t.Context()) })

	first := dial(t, path)
	roundTrip(t, first, bufio.NewReader(first), "a")

	refused := dial(t, path)
	if _, err := io.WriteString(refused, `{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}`+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(refused)
	if err != nil {
		t.Fatalf("refused client read %q then %v, want the frame then EOF", got, err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32004,"message":"Connection limit reached (1)","data":{"limit":1,"reason":"connection_limit"}}}` + "\n"
	if string(got) != want {
		t.Fatalf("refusal\n got %q\nwant %q", got, want)
	}

	first.Close()
	waitFor(t, "the first client to be released", func() bool { return s.Clients() == 0 })
	next := dial(t, path)
	roundTrip(t, next, bufio.NewReader(next), "b")
}

// An ephemeral server calls Idle once the last client has left and the grace has passed, not while a client is
// still connected; Shutdown disarms a pending exit.
func TestEphemeralIdleAfterLastClient(t *testing.T) {
	t.Parallel()
	ln, path := unixListener(t)
	idle := make(chan struct{}, 4)
	s := New(Options{Ephemeral: true, EphemeralGrace: time.Millisecond, Idle: func() { idle <- struct{}{} }})
	go func() { _ = s.Serve(t.Context(), ln, echo) }()
	t.Cleanup(func() { s.Shutdown(t.Context()) })

	a, b := dial(t, path), dial(t, path)
	roundTrip(t, a, bufio.NewReader(a), "a")
	roundTrip(t, b, bufio.NewReader(b), "b")
	a.Close()
	waitFor(t, "one client released", func() bool { return s.Clients() == 1 })
	s.mu.Lock()
	armed := s.idle != nil
	s.mu.Unlock()
	if armed {
		t.Fatal("ephemeral exit armed while a client is still connected")
	}
	b.Close()
	select {
	case <-idle:
	case <-time.After(safety):
		t.Fatal("Idle not called after the last client left")
	}
}

// Shutdown keeps its order: stop accepting, Drain, cancel the connections (each ends gracefully), and Abort only
// for connections still open at the drain deadline.
func TestShutdownOrder(t *testing.T) {
	t.Parallel()
	for _, stubborn := range []bool{false, true} {
		t.Run(map[bool]string{false: "graceful", true: "past the deadline"}[stubborn], func(t *testing.T) {
			ln, path := unixListener(t)
			var mu sync.Mutex
			var events []string
			record := func(e string) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
			abort := make(chan struct{})
			h := func(ctx context.Context, nc net.Conn) {
				echo(ctx, nc)
				record("conn ctx cancelled")
				if stubborn {
					<-abort // ignores the cancel until aborted
				}
			}
			s := New(Options{
				DrainTimeout: 50 * time.Millisecond,
				Drain: func(ctx context.Context) {
					if _, err := net.Dial("unix", path); err == nil {
						t.Error("a connection was accepted during the drain")
					}
					record("drain")
				},
				Abort: func() { record("abort"); close(abort) },
			})
			served := make(chan error, 1)
			go func() { served <- s.Serve(t.Context(), ln, h) }()
			c := dial(t, path)
			roundTrip(t, c, bufio.NewReader(c), "x")

			s.Shutdown(t.Context())
			if err := <-served; err != nil {
				t.Errorf("Serve = %v", err)
			}
			want := []string{"drain", "conn ctx cancelled"}
			if stubborn {
				want = append(want, "abort")
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(events, want) {
				t.Fatalf("events %q, want %q", events, want)
			}
			if s.Clients() != 0 {
				t.Errorf("%d clients after Shutdown", s.Clients())
			}
		})
	}
}

// The one-listener Serve shuts down when its ctx ends; a listener served after Shutdown is stopped at once.
func TestServeUntilContextEnds(t *testing.T) {
	t.Parallel()
	ln, path := unixListener(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, echo, Options{}) }()
	c := dial(t, path)
	r := bufio.NewReader(c)
	roundTrip(t, c, r, "x")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v", err)
		}
	case <-time.After(safety):
		t.Fatal("Serve did not return after ctx ended")
	}
	if line, err := r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("client after shutdown read %q, %v; want EOF", line, err)
	}

	s := New(Options{})
	s.Shutdown(t.Context())
	ln2, _ := unixListener(t)
	if err := s.Serve(t.Context(), ln2, echo); err != nil {
		t.Fatalf("Serve after Shutdown = %v", err)
	}
	if _, err := ln2.Accept(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("listener served after Shutdown still accepts: %v", err)
	}
}
