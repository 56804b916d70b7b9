package jsonrpc

import (
	"bufio"
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
)

// safety bounds every blocking read in tests so a bug fails the test instead of hanging it. It is never
// asserted on: tests check frames and states, not durations.
const safety = 10 * time.Second

// pair is a server Conn serving one end of a transport and the raw client end.
type pair struct {
	t        *testing.T
	srv      *Conn
	client   net.Conn      // the client's socket; nil on a transport that is not a socket
	br       *bufio.Reader // reads client
	end      clientEnd     // the client end, whatever the transport
	serveErr chan error
}

// clientEnd is the client side of a transport, as the tests that run over every framer see it.
type clientEnd interface {
	// write sends NDJSON text; a message transport sends each non-blank line as one message.
	write(s string) error
	// readFrame returns the next frame the server wrote, without its newline; io.EOF once the server closed.
	readFrame() (string, error)
	closeWrite() error
	close() error
}

// pairMaker starts a server Conn on one kind of transport.
type pairMaker func(t *testing.T, h Handler, opts Options) *pair

// framers are the transports the framer-neutral Conn tests run over: NDJSON on a real Unix socket (deadlines and
// half-close), and one message per frame in memory with neither, as a WebSocket or stdio framer may be.
var framers = []struct {
	name string
	make pairMaker
}{
	{"unix socket", newPair},
	{"in-memory messages", newMemPair},
}

// forEachFramer runs test once per transport.
func forEachFramer(t *testing.T, test func(t *testing.T, newPair pairMaker)) {
	for _, f := range framers {
		t.Run(f.name, func(t *testing.T) { test(t, f.make) })
	}
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
	br := bufio.NewReader(client)
	return startPair(t, NewConn(NewStream(server), h, opts), &socketEnd{c: client, br: br}, client, br)
}

func newMemPair(t *testing.T, h Handler, opts Options) *pair {
	t.Helper()
	f, end := newMemFramer()
	return startPair(t, NewConn(f, h, opts), end, nil, nil)
}

func startPair(t *testing.T, srv *Conn, end clientEnd, client net.Conn, br *bufio.Reader) *pair {
	p := &pair{t: t, srv: srv, client: client, br: br, end: end, serveErr: make(chan error, 1)}
	go func() { p.serveErr <- p.srv.Serve(t.Context()) }()
	t.Cleanup(func() {
		_ = end.close()
		_ = p.srv.Close()
		<-p.srv.Done()
	})
	return p
}

func (p *pair) send(lines ...string) {
	p.t.Helper()
	if err := p.end.write(strings.Join(lines, "\n") + "\n"); err != nil {
		p.t.Fatalf("client write: %v", err)
	}
}

// recv returns the next line the server wrote, without its newline.
func (p *pair) recv() string {
	p.t.Helper()
	line, err := p.end.readFrame()
	if err != nil {
		p.t.Fatalf("client read: %v (partial %q)", err, line)
	}
	return line
}

// recvEOF asserts that the server closed the connection cleanly after everything already read.
func (p *pair) recvEOF() {
	p.t.Helper()
	line, err := p.end.readFrame()
	if !errors.Is(err, io.EOF) || line != "" {
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

// socketEnd is the client end of a Unix socket.
type socketEnd struct {
	c  net.Conn
	br *bufio.Reader
}

func (e *socketEnd) write(s string) error {
	_ = e.c.SetWriteDeadline(time.Now().Add(safety))
	_, err := io.WriteString(e.c, s)
	return err
}

func (e *socketEnd) readFrame() (string, error) {
	_ = e.c.SetReadDeadline(time.Now().Add(safety))
	line, err := e.br.ReadString('\n')
	if err != nil {
		return line, err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (e *socketEnd) closeWrite() error { return e.c.(*net.UnixConn).CloseWrite() }
func (e *socketEnd) close() error      { return e.c.Close() }

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
