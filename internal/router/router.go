// Package router is the skeleton the protocol servers share (the native rpc, ACP, the gateway's WebSockets):
// the method table, with typed handlers behind one adapter that decodes params, per-method scheduling flags, and
// two hooks a protocol supplies, its grant check and its mapping of domain errors to wire errors; and the
// registry of connections (Peers) with the one source of connection ids, the count of requests in flight that
// Drain waits for, and CloseAll. Peer is the protocol's own per-connection state. The package knows JSON-RPC
// requests and errors, nothing of sessions or config.
package router

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// Method is one entry of a table: the grant it needs, how the connection schedules it, and the adapted handler.
type Method[Peer any] struct {
	// Grant is passed to the table's Authorize hook before the handler runs; "" means none is needed.
	Grant string
	// Concurrent methods run beside the connection's other requests (a long turn, and what must reach it).
	Concurrent bool
	// Inline methods are cheap, in memory and never block: they run on the reader, skipping the dispatcher
	// handoff.
	Inline bool
	call   func(ctx context.Context, p Peer, req *jsonrpc.Request) (any, error)
}

// Handle adapts a typed handler: decode params (snake_case with camelCase aliases) into P, release the frame
// (a long turn must not hold it), call f.
func Handle[Peer, P, R any](grant string, f func(context.Context, Peer, *P) (R, error)) Method[Peer] {
	return Method[Peer]{Grant: grant, call: func(ctx context.Context, p Peer, req *jsonrpc.Request) (any, error) {
		params := new(P)
		err := decodeParams(req.Params, req.ParamsValidated(), params)
		req.ReleaseParams()
		if err != nil {
			return nil, err
		}
		return f(ctx, p, params)
	}}
}

// HandleRequest is Handle for a handler that also needs the request itself, e.g. to act once its response has
// gone out (jsonrpc.Request.AfterReply). Params are released before f runs.
func HandleRequest[Peer, P, R any](grant string, f func(context.Context, Peer, *P, *jsonrpc.Request) (R, error)) Method[Peer] {
	return Method[Peer]{Grant: grant, call: func(ctx context.Context, p Peer, req *jsonrpc.Request) (any, error) {
		params := new(P)
		err := decodeParams(req.Params, req.ParamsValidated(), params)
		req.ReleaseParams()
		if err != nil {
			return nil, err
		}
		return f(ctx, p, params, req)
	}}
}

// HandleRaw adapts a handler that reads its request's params itself (a method with a fast path over the raw
// bytes; DecodeValidParams or DecodeParams for the rest). The frame is released when f returns.
func HandleRaw[Peer, R any](grant string, f func(context.Context, Peer, *jsonrpc.Request) (R, error)) Method[Peer] {
	return Method[Peer]{Grant: grant, call: func(ctx context.Context, p Peer, req *jsonrpc.Request) (any, error) {
		defer req.ReleaseParams()
		return f(ctx, p, req)
	}}
}

// Options are a protocol's hooks.
type Options[Peer any] struct {
	// Authorize runs before every known method's handler, with the method's grant (also ""); an error refuses
	// the call and goes out mapped like a handler's. Nil allows every call.
	Authorize func(ctx context.Context, p Peer, grant string) error
	// MapError maps an error of the protocol's domains to its wire error, or returns nil for an error it does
	// not know. Nil knows none.
	MapError func(err error) *jsonrpc.Error
	// Logger receives the errors no mapper knew, once each with the method and request id; nil discards them.
	Logger *slog.Logger
}

// Table maps method names to methods. Register every method before the first connection is served; from then
// on the table is only read, by any number of connections at once.
type Table[Peer any] struct {
	opts    Options[Peer]
	methods map[string]Method[Peer]
}

// New returns an empty table with the protocol's hooks.
func New[Peer any](opts Options[Peer]) *Table[Peer] {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Table[Peer]{opts: opts, methods: map[string]Method[Peer]{}}
}

// Register adds (or replaces) the method called name.
func (t *Table[Peer]) Register(name string, m Method[Peer]) { t.methods[name] = m }

// Names lists the registered methods, sorted.
func (t *Table[Peer]) Names() []string { return slices.Sorted(maps.Keys(t.methods)) }

// Inline reports whether name runs on the connection's reader; an unknown method does, it is answered at once.
// It fits jsonrpc.Options.Inline.
func (t *Table[Peer]) Inline(name string) bool {
	m, ok := t.methods[name]
	return !ok || m.Inline
}

// Concurrent reports whether name runs beside the connection's other requests. It fits
// jsonrpc.Options.Concurrent.
func (t *Table[Peer]) Concurrent(name string) bool {
	m, ok := t.methods[name]
	return ok && m.Concurrent
}

// Dispatch serves req for peer p: an unknown method is -32601 (a notification of one is ignored), then the
// Authorize hook, then the handler; any error goes out through WireError.
func (t *Table[Peer]) Dispatch(ctx context.Context, p Peer, req *jsonrpc.Request) (any, error) {
	m, ok := t.methods[req.Method]
	if !ok {
		if req.IsNotification() {
			return nil, nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Unknown method: "+req.Method, nil)
	}
	if t.opts.Authorize != nil {
		if err := t.opts.Authorize(ctx, p, m.Grant); err != nil {
			return nil, t.WireError(err, req)
		}
	}
	res, err := m.call(ctx, p, req)
	return res, t.WireError(err, req)
}

// WireError is the one place an error becomes a JSON-RPC error: a *jsonrpc.Error passes as it is, a domain error
// goes through the MapError hook, and anything else becomes -32603 with a generic message, the cause logged once
// with the request id. A protocol uses it too for what it serves outside the table (a handshake).
func (t *Table[Peer]) WireError(err error, req *jsonrpc.Request) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	if t.opts.MapError != nil {
		if we := t.opts.MapError(err); we != nil {
			return we
		}
	}
	t.opts.Logger.Error("request failed", "method", req.Method, "rpc_id", string(req.ID), "err", err)
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error", nil)
}

// InvalidParams is the -32602 error with msg, for a handler's own checks of its params.
func InvalidParams(msg string) *jsonrpc.Error { return invalidParams(msg) }
