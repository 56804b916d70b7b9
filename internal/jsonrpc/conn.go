package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Options (protocol.md §2.1).
const (
	DefaultFrameTimeout  = 30 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultMaxQueueBytes = 16 << 20
)

// maxQueuedRequests bounds the sequential requests read but not yet handled; when it is reached the reader
// waits, so a flooding client is slowed down by TCP/Unix flow control instead of growing our memory.
const maxQueuedRequests = 64

// maxConcurrentHandlers bounds the concurrent handlers running at once on one connection; when it is reached
// the reader waits, so a client that floods concurrent requests without reading their answers holds a bounded
// number of goroutines (each with its request and unsent response). It is far above what legitimate use needs
// (the daemon's long-running concurrent requests are bounded by its session limits).
const maxConcurrentHandlers = 1024

// After a terminal error frame Serve keeps reading and discarding for at most maxLinger and
// max(2*MaxFrameBytes, minLingerBytes) bytes, so that the peer sees the frame and then EOF rather than a
// connection reset (closing a socket with unread input resets it).
const (
	maxLinger      = 5 * time.Second
	minLingerBytes = 16 << 20
)

// Handler handles one valid inbound request or notification.
//
// For a request the result is sent as "result" (nil => null). An error that is (or wraps) an *Error is sent
// as is; any other error becomes -32603 "Internal error" and is logged once with the request id. For a
// notification the result and error are discarded. ctx is cancelled when the connection ends. Handle may
// call c.Call and c.Notify; it must not call Serve.
type Handler interface {
	Handle(ctx context.Context, c *Conn, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, c *Conn, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, c *Conn, req *Request) (any, error) {
	return f(ctx, c, req)
}

// Options configure a Conn. Zero values take the defaults.
type Options struct {
	MaxFrameBytes int           // default 8 MiB; a longer line gets -32600 frame_too_large (id null), then close
	FrameTimeout  time.Duration // default 30 s from a frame's first byte; then -32600 frame_timeout, then close
	// WriteTimeout, default 30 s per frame: a peer that does not read is disconnected (reading stops and the
	// handlers are cancelled at once; what was already queued gets one more WriteTimeout to be flushed).
	WriteTimeout  time.Duration
	MaxQueueBytes int           // default 16 MiB of queued outbound frames; one larger frame is allowed alone
	CallTimeout   time.Duration // if > 0, the timeout of Call when its ctx has no deadline
	// Concurrent reports whether a request method runs on its own goroutine; other requests (and all
	// requests when nil) are handled one at a time in arrival order.
	Concurrent func(method string) bool
	// Inline reports whether a sequential request is cheap and never blocks (it must not call Call): when no
	// other sequential request is queued or running it is handled on the reader goroutine, saving a handoff.
	// Arrival order is kept either way.
	Inline func(method string) bool
	// Budget, shared by every connection of a server, bounds the bytes of the inbound frames they hold at once;
	// nil => no bound beyond MaxFrameBytes per frame.
	Budget *Budget
	// Payload, if set, is asked by the reader about every inbound request on a framer that is a PayloadReader:
	// how many raw bytes follow the request's frame (0: none; see payload.go). An error, or a length beyond
	// MaxFrameBytes, is the request's response and ends the connection.
	Payload func(req *Request) (int, error)
	Logger  *slog.Logger // nil => discard
}

func (o Options) withDefaults() Options {
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if o.FrameTimeout <= 0 {
		o.FrameTimeout = DefaultFrameTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = DefaultMaxQueueBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Conn is one JSON-RPC connection over a Framer: a reader goroutine (Serve), a dispatcher for sequential
// requests, one writer at a time behind a bounded queue, and the pending map of outbound Calls. An idle
// connection runs only its reader: the dispatcher runs while sequential requests wait or run, and frames are
// written by whoever produced them unless others wait, in which case a drain goroutine runs until the queue is
// empty. All methods are safe for concurrent use.
type Conn struct {
	f    Framer
	dl   Deadlines  // f's deadlines, or nil
	hc   HalfCloser // f's half-close, or nil (also when f has no deadlines to bound the linger)
	h    Handler
	opts Options
	log  *slog.Logger

	q       *outQueue
	seq     chan *Request // sequential requests, read by the dispatcher; made by the reader on first use
	seqBusy atomic.Int64  // sequential requests queued or running; the dispatcher runs while it is > 0
	conc    chan struct{} // one token per running concurrent handler
	closing chan struct{} // closed by Close
	done    chan struct{} // closed when the connection is finished
	nextID  atomic.Uint64
	wg      sync.WaitGroup // concurrent handler goroutines and the dispatcher

	mu         sync.Mutex // guards the fields below and the read deadline against Close
	served     bool       // Serve was called, or Close ran before it (Serve will not run)
	closed     bool       // Close was called
	readerDone bool       // no more responses can arrive: Call fails fast
	pending    map[string]chan callResult
	writeErr   error     // the first write failure
	flushBy    time.Time // after a write stall: the deadline of the final flush
	flushErr   error     // a write failure during that flush

	termID json.RawMessage // the id the terminal error frame answers (a request whose payload failed), or nil
}

type callResult struct {
	result json.RawMessage
	err    error
}

// NewConn returns a Conn on the framer f (NewStream for NDJSON over a socket). Nothing is read or written until
// Serve runs (Notify and Call queue). The Conn owns f: it closes it when the connection ends.
func NewConn(f Framer, h Handler, opts Options) *Conn {
	opts = opts.withDefaults()
	dl, _ := f.(Deadlines)
	hc, _ := f.(HalfCloser)
	if dl == nil {
		hc = nil
	}
	c := &Conn{
		f:       f,
		dl:      dl,
		hc:      hc,
		h:       h,
		opts:    opts,
		log:     opts.Logger,
		conc:    make(chan struct{}, maxConcurrentHandlers),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		pending: make(map[string]chan callResult),
	}
	c.q = newOutQueue(opts.MaxQueueBytes, c.writeQueued)
	_, c.q.batching = f.(coalescer)
	return c
}

// Done returns a channel closed when the connection is finished (Serve returned, or Close before Serve).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close makes Serve stop reading and return after its shutdown sequence; it does not wait (use Done).
// Close is idempotent and may be called from a handler. Cancelling Serve's ctx has the same effect.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	serving := c.served
	c.served = true
	// A deadline in the past interrupts a blocked read without closing the transport, so queued frames can
	// still be flushed. Setting it under mu keeps the frame deadline from overriding it.
	if c.dl != nil {
		_ = c.dl.SetReadDeadline(time.Unix(1, 0))
	}
	c.mu.Unlock()
	if !serving {
		c.q.close(true)
		c.failPending()
		_ = c.f.Close()
		close(c.done)
	} else if c.dl == nil {
		_ = c.f.Close() // the only way to interrupt the read: what is still queued is dropped
	}
	return nil
}

// Abort is Close, and it closes the transport at once: a write blocked on a peer that does not read returns,
// and frames still queued are dropped. Serve still runs its shutdown sequence (handlers cancelled and waited
// for). Use it when a graceful Close has taken too long.
func (c *Conn) Abort() {
	_ = c.Close()
	_ = c.f.Close()
}

// Serve runs the connection until the peer closes, an I/O error, a framing limit, Close, or ctx is
// cancelled. On the way out it cancels the ctx given to handlers, lets the dispatcher finish the requests
// already read, waits for every handler goroutine, writes a terminal error frame if a limit was hit, flushes
// the queued frames (each bounded by WriteTimeout; after a write stall, those queued before it, within one
// more WriteTimeout in all), fails pending Calls with ErrClosed and closes the framer; Done is closed last.
// It returns nil for a peer EOF or Close, ErrFrameTooLarge or ErrFrameTimeout for a framing limit, else the
// read or write error. Serve may be called once; a second call, or a call after Close, returns ErrClosed.
func (c *Conn) Serve(ctx context.Context) error {
	c.mu.Lock()
	if c.served {
		c.mu.Unlock()
		return ErrClosed
	}
	c.served = true
	c.mu.Unlock()

	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()

	c.q.start()
	terminal, err := c.readLoop(hctx)

	if c.seq != nil {
		close(c.seq) // only readLoop sends on seq
	}
	c.failPending()
	cancel()
	c.wg.Wait() // the dispatcher finishes the requests already read; the concurrent handlers end
	if terminal != nil {
		fb := getFrameBuf()
		fb.error(c.termID, terminal)
		_ = c.q.push(nil, outFrame{fb.b, fb}, true)
	}
	c.q.close(false)
	c.q.flush()

	c.mu.Lock()
	werr, flushed := c.writeErr, !c.flushBy.IsZero() && c.flushErr == nil
	c.mu.Unlock()
	if terminal != nil && werr == nil {
		c.linger(false)
	} else if flushed {
		c.linger(true)
	}
	_ = c.f.Close()
	close(c.done)
	if err == nil && werr != nil {
		err = fmt.Errorf("jsonrpc: write: %w", werr)
	}
	return err
}

// readLoop reads and routes frames until the connection must end. It returns, for a framing limit, the
// error frame to send last, and Serve's error.
func (c *Conn) readLoop(ctx context.Context) (*Error, error) {
	var frameDeadline time.Time // zero unless an unfinished frame armed it
	lim := &FrameLimits{Max: c.opts.MaxFrameBytes}
	if c.dl != nil {
		lim.Started = func() {
			frameDeadline = time.Now().Add(c.opts.FrameTimeout)
			c.setReadDeadline(frameDeadline)
		}
	}
	charge := frameCharge{b: c.opts.Budget}
	lim.Grow = func(n int) error {
		start := time.Now()
		waited, err := charge.grow(c.closing, n)
		if waited && !frameDeadline.IsZero() {
			// The time spent waiting for the budget is ours, not the peer's: it does not count against the frame.
			frameDeadline = frameDeadline.Add(time.Since(start))
			c.setReadDeadline(frameDeadline)
		}
		return err
	}
	defer func() { c.opts.Budget.release(charge.take()) }() // a frame cut short
	for {
		frame, err := c.f.ReadFrame(lim)
		if err != nil {
			if c.isClosed() {
				return nil, nil
			}
			switch {
			case errors.Is(err, io.EOF):
				return nil, nil
			case errors.Is(err, ErrFrameTooLarge):
				return frameTooLargeError(c.opts.MaxFrameBytes), ErrFrameTooLarge
			case errors.Is(err, os.ErrDeadlineExceeded):
				return frameTimeoutError(c.opts.FrameTimeout.Milliseconds()), ErrFrameTimeout
			default:
				return nil, fmt.Errorf("jsonrpc: read: %w", err)
			}
		}
		if !frameDeadline.IsZero() {
			frameDeadline = time.Time{}
			c.setReadDeadline(time.Time{}) // idle time between frames is unlimited
		}
		held, size := charge.take(), len(frame)
		in := Classify(frame) // not a copy: a request's params are a slice of frame
		switch {
		case in.Request != nil:
			extra, stop, term, err := c.readPayload(in.Request)
			if held += extra; stop {
				c.opts.Budget.release(held)
				return term, err
			}
			if held > 0 {
				in.Request.release = func() { c.opts.Budget.release(held) }
			}
			if !c.deliver(ctx, in.Request) {
				in.Request.ReleaseParams()
				return nil, nil
			}
			continue
		case in.Response != nil:
			c.resolve(in.Response) // the waiting Call decodes the result at once
		case in.Reply != nil:
			c.log.Debug("jsonrpc: invalid frame", "code", in.Reply.Code, "reason", in.Reply.Message, "bytes", size)
			fb := getFrameBuf()
			fb.error(in.ReplyID, in.Reply)
			if err := c.q.push(c.closing, outFrame{fb.b, fb}, false); err != nil {
				c.opts.Budget.release(held)
				return nil, nil
			}
		case in.Drop:
			c.log.Warn("jsonrpc: dropped invalid response", "bytes", size)
		}
		c.opts.Budget.release(held)
	}
}

// deliver starts a concurrent handler (waiting while maxConcurrentHandlers run) or queues a sequential request
// (waiting while the queue is full). It returns false when the connection is closing.
func (c *Conn) deliver(ctx context.Context, req *Request) bool {
	if c.opts.Concurrent != nil && c.opts.Concurrent(req.Method) {
		select {
		case c.conc <- struct{}{}:
		case <-c.closing:
			return false
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer func() { <-c.conc }()
			c.handle(ctx, req)
		}()
		return true
	}
	if c.opts.Inline != nil && c.seqBusy.Load() == 0 && c.opts.Inline(req.Method) {
		c.handle(ctx, req) // nothing sequential is pending, so order is kept
		return true
	}
	if c.seq == nil {
		// Made on the first sequential request: an idle connection that only initialized (inline) and ran
		// inline or concurrent methods never holds the 64-slot queue (~600 B).
		c.seq = make(chan *Request, maxQueuedRequests)
	}
	if c.seqBusy.Add(1) == 1 {
		c.wg.Add(1)
		go c.dispatch(ctx) // nothing sequential was queued or running: no dispatcher is left
	}
	select {
	case c.seq <- req:
		return true
	case <-c.closing:
		c.seqBusy.Add(-1) // a dispatcher waiting for this request ends when Serve closes seq
		return false
	}
}

// dispatch handles sequential requests in arrival order and returns once none is queued (or seq is closed); the
// reader starts it again for the next one.
func (c *Conn) dispatch(ctx context.Context) {
	defer c.wg.Done()
	for req := range c.seq {
		c.handle(ctx, req)
		if c.seqBusy.Add(-1) == 0 {
			return
		}
	}
}

// handle runs the handler for one request, releases its frame and queues its response.
func (c *Conn) handle(ctx context.Context, req *Request) {
	result, err := c.invoke(ctx, req)
	req.ReleaseParams()
	if req.after != nil {
		defer req.after()
	}
	if req.IsNotification() {
		if err != nil {
			c.log.Debug("jsonrpc: notification handler failed", "method", req.Method, "err", err)
		}
		return
	}
	fb := getFrameBuf()
	if err == nil {
		err = fb.response(req.ID, result)
	}
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			c.log.Error("jsonrpc: internal error", "method", req.Method, "rpc_id", string(req.ID), "err", err)
			rpcErr = NewError(CodeInternalError, "Internal error", nil)
		}
		fb.error(req.ID, rpcErr)
	}
	if err := c.send(nil, outFrame{fb.b, fb}); err != nil {
		c.log.Debug("jsonrpc: response dropped", "method", req.Method, "rpc_id", string(req.ID), "err", err)
	}
}

// send writes f at once from the calling goroutine when nothing is queued or being written (the common case:
// no handoff to another goroutine), else queues it behind the others. Either way frames leave in the order
// they were produced, one writer at a time.
func (c *Conn) send(stop <-chan struct{}, f outFrame) error {
	if !c.q.claim(len(f.b)) {
		return c.q.push(stop, f, false)
	}
	err := c.write(f)
	c.q.release(len(f.b))
	if err != nil {
		return ErrClosed
	}
	return nil
}

// writeQueued writes the frames taken from the queue together: several (on a byte-stream framer only) go out in
// one write, copied into one pooled buffer. The caller holds the queue's write claim; fs is cleared once written.
func (c *Conn) writeQueued(fs []outFrame) {
	defer clear(fs)
	if len(fs) == 1 {
		_ = c.write(fs[0])
		return
	}
	batch := getFrameBuf()
	for _, f := range fs {
		batch.b = append(batch.b, f.b...)
	}
	n, err := c.writeBytes(batch.b)
	putFrameBuf(batch)
	if err == nil {
		for _, f := range fs {
			putFrameBuf(f.buf)
		}
		return
	}
	// The frames before the n-th byte went out; the rest, from the torn frame on, is what is left.
	i := 0
	for ; i < len(fs) && n >= len(fs[i].b); i++ {
		n -= len(fs[i].b)
		putFrameBuf(fs[i].buf)
	}
	rest := append([]outFrame(nil), fs[i:]...)
	rest[0].b = rest[0].b[n:]
	c.writeFailed(rest, err)
}

// writeBytes writes b within WriteTimeout (within the final flush's deadline after a stall).
func (c *Conn) writeBytes(b []byte) (int, error) {
	c.mu.Lock()
	deadline := c.flushBy
	c.mu.Unlock()
	if deadline.IsZero() {
		deadline = time.Now().Add(c.opts.WriteTimeout)
	}
	if c.dl != nil {
		_ = c.dl.SetWriteDeadline(deadline)
	}
	return c.f.WriteFrame(b)
}

// write writes one frame within WriteTimeout (within the final flush's deadline after a stall) and recycles its
// buffer; a failure ends the connection. The caller holds the queue's write claim. It returns nil when the frame
// went out, or when a stall left its unwritten rest first in the queue for the final flush.
func (c *Conn) write(f outFrame) error {
	n, err := c.writeBytes(f.b)
	if err == nil {
		putFrameBuf(f.buf)
		return nil
	}
	if !c.writeFailed([]outFrame{{f.b[n:], f.buf}}, err) {
		return err
	}
	return nil
}

// writeFailed ends the connection after a failed write. The first write stall (the peer stopped reading) stops
// reading and cancels the handlers at once, but what was queued until then (rest, the unwritten end of the
// torn frame, and the frames of its batch after it, first) is still flushed for one more WriteTimeout: a peer that
// resumes reading in time gets every frame produced before the close, then EOF. Frames produced after it are
// refused (ErrClosed). Any other failure, or a second one, drops the queue. It reports whether rest was queued.
func (c *Conn) writeFailed(rest []outFrame, err error) bool {
	c.mu.Lock()
	flush := c.writeErr == nil && errors.Is(err, os.ErrDeadlineExceeded)
	switch {
	case c.writeErr == nil:
		c.writeErr = err
	case c.flushErr == nil:
		c.flushErr = err
	}
	if flush {
		c.flushBy = time.Now().Add(c.opts.WriteTimeout)
	}
	c.mu.Unlock()
	if flush {
		c.q.pushFront(rest)
	}
	c.q.close(!flush)
	_ = c.Close()
	return flush
}

// invoke calls the handler, turning a panic into an error so one bad request cannot kill the daemon.
func (c *Conn) invoke(ctx context.Context, req *Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jsonrpc: handler for %q panicked: %v", req.Method, p)
		}
	}()
	return c.h.Handle(ctx, c, req)
}

// linger half-closes the transport and discards what the peer still sends (bounded in time and bytes) so the
// peer reads our last frame and then a clean EOF instead of a connection reset; a framer without HalfCloser
// does not need it. afterStall: the connection was closed for a write stall and its queue flushed.
func (c *Conn) linger(afterStall bool) {
	if c.hc == nil {
		return
	}
	_ = c.hc.CloseWrite()
	deadline := time.Now().Add(min(c.opts.WriteTimeout, maxLinger))
	if afterStall {
		_ = c.dl.SetReadDeadline(deadline) // replaces the past deadline with which the stall's Close stopped the reader
	} else {
		c.setReadDeadline(deadline)
	}
	c.hc.DiscardInput(int64(max(2*c.opts.MaxFrameBytes, minLingerBytes)))
}

// setReadDeadline sets the read deadline unless Close has already set it to the past. Only called with dl set.
func (c *Conn) setReadDeadline(t time.Time) {
	c.mu.Lock()
	if !c.closed {
		_ = c.dl.SetReadDeadline(t)
	}
	c.mu.Unlock()
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Notify queues a notification. It blocks only while the outbound queue is over MaxQueueBytes, until there
// is space or the connection closes; it returns ErrClosed once the connection is closed.
func (c *Conn) Notify(method string, params any) error {
	fb := getFrameBuf()
	if err := fb.request(nil, method, params); err != nil {
		putFrameBuf(fb)
		return err
	}
	return c.send(nil, outFrame{fb.b, fb})
}

// Call sends a request with id "zc-out-N" (N counts from 0 per connection) and waits for the peer's
// response: its result (a "result":null success returns the JSON literal null) or its *Error. When ctx ends
// first the request is forgotten and ctx's error is returned (wrapped); if the connection closes first,
// ErrClosed. Responses with unknown ids are logged and ignored by the reader.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c.opts.CallTimeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.CallTimeout)
			defer cancel()
		}
	}
	id := "zc-out-" + strconv.FormatUint(c.nextID.Add(1)-1, 10)
	fb := getFrameBuf()
	if err := fb.request(json.RawMessage(strconv.Quote(id)), method, params); err != nil {
		putFrameBuf(fb)
		return nil, err
	}
	ch := make(chan callResult, 1)
	c.mu.Lock()
	if c.closed || c.readerDone {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.pending[id] = ch
	c.mu.Unlock()

	if err := c.q.push(ctx.Done(), outFrame{fb.b, fb}, false); err != nil {
		c.forget(id)
		if errors.Is(err, errStopped) {
			return nil, fmt.Errorf("jsonrpc: call %s: %w", method, ctx.Err())
		}
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		c.forget(id)
		return nil, fmt.Errorf("jsonrpc: call %s: %w", method, ctx.Err())
	}
}

func (c *Conn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// resolve hands a response to the Call waiting for its id.
func (c *Conn) resolve(resp *Response) {
	var id string
	if isString(resp.ID) {
		_ = json.Unmarshal(resp.ID, &id)
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if !ok {
		c.log.Warn("jsonrpc: response to unknown id ignored", "rpc_id", string(resp.ID))
		return
	}
	if resp.Error != nil {
		ch <- callResult{err: resp.Error}
		return
	}
	ch <- callResult{result: resp.Result}
}

// failPending makes every waiting Call return ErrClosed and later Calls fail fast.
func (c *Conn) failPending() {
	c.mu.Lock()
	c.readerDone = true
	pending := c.pending
	c.pending = make(map[string]chan callResult)
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- callResult{err: ErrClosed}
	}
}
