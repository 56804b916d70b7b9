// Package client is the command line's side of the native protocol: a connection that initializes, calls
// methods and hands what the daemon sends (notifications, daemon→client requests) to one handler in order.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// Conn is an initialized native-protocol connection to the daemon.
type Conn struct {
	conn   *jsonrpc.Conn
	served chan struct{}
	init   api.InitializeResult
}

// Inbound handles a notification (result ignored) or a daemon→client request.
type Inbound func(ctx context.Context, req *jsonrpc.Request) (any, error)

// New runs a native-protocol client on an established connection and performs initialize, announcing caps
// (nil: none). Everything the daemon sends is handled one at a time in arrival order: session/update events
// must be rendered in the order the daemon produced them, and a question (elicitation/create) must appear after
// the tool call that asks it. A handler waiting for the user blocks only later events of the same turn, which
// is waiting for the answer anyway; responses to our own calls (session/cancel) are still read. The connection
// is served on a context that the caller's cancellation does not end, so an interrupt can still send
// session/cancel; end it with Close.
func New(ctx context.Context, nc net.Conn, caps map[string]any, onInbound Inbound) (*Conn, error) {
	return NewAs(ctx, nc, caps, "", onInbound)
}

// NewAs is New whose initialize presents authToken (when not ""), a paired gateway token: the connection then
// acts as that device, with its grants, instead of as the socket's peer; a token that is not paired is the
// daemon's -32010.
func NewAs(ctx context.Context, nc net.Conn, caps map[string]any, authToken string, onInbound Inbound) (*Conn, error) {
	h := jsonrpc.HandlerFunc(func(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) (any, error) {
		if onInbound == nil {
			if req.IsNotification() {
				return nil, nil
			}
			return nil, jsonrpc.NewError(api.CodeMethodNotFound, "Unknown method: "+req.Method, nil)
		}
		return onInbound(ctx, req)
	})
	c := &Conn{
		conn:   jsonrpc.NewConn(jsonrpc.NewStream(nc), h, jsonrpc.Options{}),
		served: make(chan struct{}),
	}
	serveCtx := context.WithoutCancel(ctx)
	go func() {
		defer close(c.served)
		_ = c.conn.Serve(serveCtx)
	}()
	params := map[string]any{"protocol_version": api.ProtocolVersion}
	if caps != nil {
		params["clientCapabilities"] = caps
	}
	if authToken != "" {
		params["auth_token"] = authToken
	}
	if err := c.Call(ctx, api.MethodInitialize, params, &c.init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ErrClosed is the error of a call whose connection the daemon closed.
var ErrClosed = errors.New("the daemon closed the connection")

// Call sends one request and decodes its result into out (when out is non-nil).
func (c *Conn) Call(ctx context.Context, method string, params, out any) error {
	raw, err := c.conn.Call(ctx, method, params)
	if err != nil {
		if errors.Is(err, jsonrpc.ErrClosed) {
			return fmt.Errorf("%s: %w", method, ErrClosed)
		}
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: unexpected result: %w", method, err)
	}
	return nil
}

// Init is what the daemon answered to initialize.
func (c *Conn) Init() api.InitializeResult { return c.init }

// Done is closed once the connection has ended (the daemon went away, or Close or Abort).
func (c *Conn) Done() <-chan struct{} { return c.conn.Done() }

// Served is closed once the connection's reader has returned.
func (c *Conn) Served() <-chan struct{} { return c.served }

// Abort closes the connection without waiting for its reader, which may be inside a handler waiting for the
// user.
func (c *Conn) Abort() { c.conn.Close() }

// Close closes the connection and waits for its reader.
func (c *Conn) Close() {
	c.conn.Close()
	<-c.served
}

// ErrorData decodes the data member of a JSON-RPC error answer into out; ok is false when err is not such an
// answer or its data does not decode.
func ErrorData(err error, out any) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Data == nil {
		return false
	}
	raw, ok := we.Data.(json.RawMessage)
	if !ok {
		var merr error
		if raw, merr = json.Marshal(we.Data); merr != nil {
			return false
		}
	}
	return json.Unmarshal(raw, out) == nil
}
