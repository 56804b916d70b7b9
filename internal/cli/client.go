package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/localsock"
)

// endpointFor resolves the daemon endpoint exactly as the daemon does.
func endpointFor(env Env, configDir string) (string, error) {
	layout, err := install.Resolve(configDir, env.Getenv, env.Home)
	if err != nil {
		return "", err
	}
	return layout.Endpoint(env.Getenv), nil
}

// errNoDaemon marks a failed connect because nothing serves the endpoint.
var errNoDaemon = errors.New("no daemon is running")

// dial connects to the endpoint; "nothing there" becomes a HintError wrapping errNoDaemon.
func dial(ctx context.Context, endpoint string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, err := localsock.Dial(dctx, endpoint)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &HintError{Err: fmt.Errorf("%w at %s", errNoDaemon, endpoint), Hint: "zeroclaw daemon"}
		}
		return nil, fmt.Errorf("connect %s: %w", endpoint, err)
	}
	return nc, nil
}

// client is a native-protocol client over jsonrpc.Conn: it initializes, calls methods, and hands inbound
// notifications and daemon→client requests to onInbound.
type client struct {
	conn   *jsonrpc.Conn
	served chan struct{}
	init   api.InitializeResult
}

// inboundFunc handles a notification (result ignored) or a daemon→client request.
type inboundFunc func(ctx context.Context, req *jsonrpc.Request) (any, error)

// connect dials the endpoint and starts a client on it (see newClient).
func connect(ctx context.Context, endpoint string, caps map[string]any, onInbound inboundFunc) (*client, error) {
	nc, err := dial(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return newClient(ctx, nc, caps, onInbound)
}

// newClient runs a native-protocol client on an established connection and performs initialize. Everything the
// daemon sends is handled one at a time in arrival order: session/update events must be rendered in the order
// the daemon produced them, and a question (elicitation/create) must appear after the tool call that asks it.
// A handler waiting for the user blocks only later events of the same turn, which is waiting for the answer
// anyway; responses to our own calls (session/cancel) are still read. The connection is served on a context
// that the caller's cancellation does not end, so an interrupt can still send session/cancel; end it with
// close.
func newClient(ctx context.Context, nc net.Conn, caps map[string]any, onInbound inboundFunc) (*client, error) {
	h := jsonrpc.HandlerFunc(func(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) (any, error) {
		if onInbound == nil {
			if req.IsNotification() {
				return nil, nil
			}
			return nil, jsonrpc.NewError(api.CodeMethodNotFound, "Unknown method: "+req.Method, nil)
		}
		return onInbound(ctx, req)
	})
	c := &client{
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
	if err := c.call(ctx, api.MethodInitialize, params, &c.init); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// errDaemonClosed is the error of a call whose connection the daemon closed.
var errDaemonClosed = errors.New("the daemon closed the connection")

// call sends one request and decodes its result into out (when out is non-nil).
func (c *client) call(ctx context.Context, method string, params, out any) error {
	raw, err := c.conn.Call(ctx, method, params)
	if err != nil {
		if errors.Is(err, jsonrpc.ErrClosed) {
			return fmt.Errorf("%s: %w", method, errDaemonClosed)
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

func (c *client) close() {
	c.conn.Close()
	<-c.served
}

// errorData decodes the data member of a JSON-RPC error answer into out; ok is false when err is not such an
// answer or its data does not decode.
func errorData(err error, out any) bool {
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
