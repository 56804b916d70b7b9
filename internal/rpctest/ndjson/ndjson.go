// Package ndjson is the one test client for JSON-RPC over newline-delimited JSON: it writes lines, reads frames
// under a safety deadline and decodes them. The jsonrpc, rpctest and e2e tests all use it; it imports only the
// standard library, so any package's tests can.
package ndjson

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Safety bounds every blocking read and write that is not given its own timeout, so a bug fails the test
// instead of hanging it. Tests never assert on it. It is generous: under -race on a loaded 2-core machine a
// 13 MB ACP prompt frame took longer than 15 s to answer (TestPromptContentBlocksAndUploads).
const Safety = 60 * time.Second

// InitializeRequest is the standard handshake Initialize sends.
const InitializeRequest = `{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1},"id":"init"}`

// Client is an NDJSON client on one stream connection. Its methods that fail the test must be called from the
// test's goroutine; Write, Recv and TryCall only return errors and may be used from any one goroutine.
type Client struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

// New wraps an open connection; the caller closes it. t may be nil for a client used only through Write, Recv
// and TryCall.
func New(t testing.TB, nc net.Conn) *Client {
	return &Client{t: t, nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}
}

// Dial connects to the Unix socket at path; the connection is closed when the test ends.
func Dial(t testing.TB, path string) *Client {
	t.Helper()
	nc, err := net.DialTimeout("unix", path, Safety)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { nc.Close() })
	return New(t, nc)
}

// Conn is the underlying connection, for raw writes, deadlines and closing.
func (c *Client) Conn() net.Conn { return c.nc }

// Reader is the client's buffered reader, for benchmarks that read frames without allocating; it holds what
// Recv has buffered, so the two can be mixed.
func (c *Client) Reader() *bufio.Reader { return c.r }

// Write writes b as it is, bounded by Safety.
func (c *Client) Write(b []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(Safety))
	_, err := c.nc.Write(b)
	_ = c.nc.SetWriteDeadline(time.Time{})
	return err
}

// SendRaw writes b as it is (no newline added) or fails the test.
func (c *Client) SendRaw(b []byte) {
	c.t.Helper()
	if err := c.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Send writes line plus "\n" or fails the test.
func (c *Client) Send(line string) {
	c.t.Helper()
	c.SendRaw([]byte(line + "\n"))
}

// Recv reads one frame, without its newline. It returns io.EOF exactly when the peer closed the connection
// cleanly between frames; bytes without a newline before EOF are an error of their own.
func (c *Client) Recv(timeout time.Duration) (string, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(timeout))
	line, err := c.r.ReadString('\n')
	if err != nil {
		if line != "" && errors.Is(err, io.EOF) {
			return "", fmt.Errorf("partial frame before EOF: %q", line)
		}
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// MustRecv reads one frame or fails the test.
func (c *Client) MustRecv() string {
	c.t.Helper()
	line, err := c.Recv(Safety)
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return line
}

// ExpectEOF asserts the peer closes the connection without sending another frame. A reset counts as a close:
// a server that closes with unread input from the client resets rather than ends the stream.
func (c *Client) ExpectEOF(timeout time.Duration) {
	c.t.Helper()
	line, err := c.Recv(timeout)
	if err == nil {
		c.t.Fatalf("expected EOF, got frame %s", line)
	}
	if !errors.Is(err, io.EOF) && !isReset(err) {
		c.t.Fatalf("expected EOF, got %v", err)
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

// Frame is one decoded frame: a response, a notification or a request from the server.
type Frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	Raw    string          `json:"-"` // the frame as received
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *Error) String() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%d %s", e.Code, e.Message)
}

// request encodes a JSON-RPC request.
func request(method string, params, id any) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": id})
	return append(b, '\n'), err
}

// Request sends a request (params and id encoded as JSON) or fails the test.
func (c *Client) Request(method string, params, id any) {
	c.t.Helper()
	b, err := request(method, params, id)
	if err != nil {
		c.t.Fatalf("%s: encode request: %v", method, err)
	}
	c.SendRaw(b)
}

// Frame reads and decodes the next frame or fails the test.
func (c *Client) Frame() Frame {
	c.t.Helper()
	line := c.MustRecv()
	var f Frame
	if err := json.Unmarshal([]byte(line), &f); err != nil {
		c.t.Fatalf("bad frame %q: %v", line, err)
	}
	f.Raw = line
	return f
}

// Next reads the next frame as a generic map or fails the test.
func (c *Client) Next() map[string]any {
	c.t.Helper()
	line := c.MustRecv()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		c.t.Fatalf("bad frame %q: %v", line, err)
	}
	return m
}

// Call sends a request and returns the next frame as a generic map, or fails the test.
func (c *Client) Call(method string, params, id any) map[string]any {
	c.t.Helper()
	m, err := c.TryCall(method, params, id)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

// TryCall is Call returning its failure instead of failing the test.
func (c *Client) TryCall(method string, params, id any) (map[string]any, error) {
	b, err := request(method, params, id)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", method, err)
	}
	if err := c.Write(b); err != nil {
		return nil, fmt.Errorf("%s: write: %w", method, err)
	}
	line, err := c.Recv(Safety)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return nil, fmt.Errorf("%s: bad frame %q", method, line)
	}
	return m, nil
}

// Result reads frames, skipping notifications and other responses, until the response to id, and returns its
// result object; an error response fails the test.
func (c *Client) Result(id any) map[string]any {
	c.t.Helper()
	want, err := json.Marshal(id)
	if err != nil {
		c.t.Fatal(err)
	}
	for {
		f := c.Frame()
		if f.Method != "" || string(f.ID) != string(want) {
			continue
		}
		var r map[string]any
		if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r == nil {
			c.t.Fatalf("request %s failed: %s", want, f.Raw)
		}
		return r
	}
}

// Initialize sends InitializeRequest and returns the reply, failing the test unless it is that request's
// successful response.
func (c *Client) Initialize() Frame {
	c.t.Helper()
	c.Send(InitializeRequest)
	f := c.Frame()
	if f.Method != "" || string(f.ID) != `"init"` || f.Error != nil || f.Result == nil {
		c.t.Fatalf("initialize failed: %s", f.Raw)
	}
	return f
}
