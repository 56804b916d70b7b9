package mcpserver

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// ServeStdio serves one MCP session over newline-delimited JSON on in and out for peer, until the client ends
// its input (the calls it made first are still answered), ctx ends, or Close; a frame longer than
// MaxFrameBytes ends the session with an error. It is what `zeroclaw mcp serve` runs.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser, peer *Peer) error {
	srv := s.newSDKServer(peer, "")
	t := &answering{inner: &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: s.opts.MaxFrameBytes}}
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	conn := router.NewConnID()
	if !s.peers.Add(conn, peer, func() { _ = ss.Close() }) {
		_ = ss.Close()
		return errShuttingDown
	}
	defer s.peers.Remove(conn)
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	err = ss.Wait()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}

// answering is a transport whose connection, at the end of the client's input, waits until every call read
// so far has been answered before it reports the end: `printf '...' | zeroclaw mcp serve` gets its answers,
// where the SDK alone would close the session with the calls still running.
type answering struct{ inner mcp.Transport }

func (a *answering) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := a.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answeringConn{Connection: c, closed: make(chan struct{})}, nil
}

// answeringConn counts the calls read and not yet answered; mu guards the fields below it.
type answeringConn struct {
	mcp.Connection
	closeOnce sync.Once
	closed    chan struct{}

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // closed when pending empties, while a Read waits for it
}

func (c *answeringConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.mu.Lock()
		var idle chan struct{}
		if len(c.pending) > 0 {
			c.idle = make(chan struct{})
			idle = c.idle
		}
		c.mu.Unlock()
		if idle != nil {
			select {
			case <-idle:
			case <-c.closed:
			case <-ctx.Done():
			}
		}
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		if c.pending == nil {
			c.pending = map[jsonrpc.ID]bool{}
		}
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *answeringConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if res, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, res.ID)
		if len(c.pending) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
		c.mu.Unlock()
	}
	return err
}

func (c *answeringConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
