package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// safety bounds every blocking read in tests so a bug fails the test instead of hanging it. It is never
// asserted on: tests check frames and states, not durations.
const safety = 10 * time.Second

// pair is a server Conn serving one end of a real Unix socket and the raw client end (c wraps client).
type pair struct {
	t        *testing.T
	srv      *Conn
	client   net.Conn
	c        *ndjson.Client
	serveErr chan error
}

// socketPair returns both ends of a real Unix domain socket connection in t.TempDir().
func socketPair(t testing.TB) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	return server, client
}

func newPair(t *testing.T, h Handler, opts Options) *pair {
	t.Helper()
	server, client := socketPair(t)
	p := &pair{t: t, srv: NewConn(server, h, opts), client: client, c: ndjson.New(t, client), serveErr: make(chan error, 1)}
	go func() { p.serveErr <- p.srv.Serve(t.Context()) }()
	t.Cleanup(func() {
		_ = client.Close()
		_ = p.srv.Close()
		<-p.srv.Done()
	})
	return p
}

func (p *pair) send(lines ...string) {
	p.t.Helper()
	p.c.Send(strings.Join(lines, "\n"))
}

// recv returns the next line the server wrote, without its newline.
func (p *pair) recv() string {
	p.t.Helper()
	line, err := p.c.Recv(safety)
	if err != nil {
		p.t.Fatalf("client read: %v", err)
	}
	return line
}

// recvEOF asserts that the server closed the connection cleanly after everything already read: EOF, not a
// reset and not a partial line.
func (p *pair) recvEOF() {
	p.t.Helper()
	if line, err := p.c.Recv(safety); !errors.Is(err, io.EOF) {
		p.t.Fatalf("want EOF, got %q, %v", line, err)
	}
}

// serveResult waits for Serve to return.
func (p *pair) serveResult() error {
	p.t.Helper()
	select {
	case err := <-p.serveErr:
		return err
	case <-time.After(safety):
		p.t.Fatal("Serve did not return")
		return nil
	}
}

// frame decodes a line into a generic map for field checks.
func frame(t *testing.T, line string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("server wrote invalid JSON %q: %v", line, err)
	}
	return m
}

// eventually polls cond until it holds or the safety bound passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// checkNoLeak fails if the goroutine count does not settle back to base.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(safety)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want <= %d:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// echo returns the params as the result and interprets a few methods for tests.
func echo(ctx context.Context, c *Conn, req *Request) (any, error) {
	switch req.Method {
	case "nil":
		return nil, nil
	case "rpc_error":
		return nil, NewError(-32000, "Session not found", map[string]string{"session_id": "s1"})
	case "plain_error":
		return nil, errors.New("disk on fire")
	case "panic":
		panic("boom")
	case "bad_result":
		return func() {}, nil
	}
	return req.Params, nil
}
