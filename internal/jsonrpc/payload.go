package jsonrpc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// A request may be followed on a byte stream by raw bytes that belong to it (a binary upload chunk, our extension
// to the protocol): Options.Payload tells the reader, from the request alone, how many bytes follow its frame;
// the reader then reads exactly that many into a buffer of their own, charged to the Budget like a frame's,
// hands them to the handler with the request (Request.Payload) and goes on with the next frame after them. Only
// a framer that carries a byte stream can do this (PayloadReader); on any other Options.Payload is never called.
//
// The stream cannot be misread: the length is known and bounded before a byte is read. When the length cannot be
// known (Options.Payload fails: a malformed or over-limit length), or the bytes do not arrive (the input ends or
// FrameTimeout passes first), the position in the stream is lost: the request gets that error as its response,
// and the connection is closed as after a framing limit.

// PayloadReader is implemented by a framer over a byte stream (NewStream's): it reads the raw bytes that follow
// the frame ReadFrame returned last.
type PayloadReader interface {
	// ReadPayload fills dst from the input that follows the last frame, or returns how many bytes it got and
	// the error that stopped it (io.ErrUnexpectedEOF when the input ended). After an error the framer is not
	// read again.
	ReadPayload(dst []byte) (int, error)
}

// Payload returns the raw bytes that followed the request's frame on the stream (see Options.Payload), or nil.
// Like Params, they are valid until ReleaseParams.
func (r *Request) Payload() []byte { return r.payload }

// CanReadPayload reports whether the connection's framer carries raw bytes after a frame (PayloadReader), so
// that Options.Payload applies to it.
func (c *Conn) CanReadPayload() bool {
	_, ok := c.f.(PayloadReader)
	return ok
}

// readPayload reads the raw bytes that follow req's frame, if Options.Payload says any do, and attaches them to
// req. It returns what it charged to the Budget (held by req from then on, like its frame) and whether reading
// must stop: the connection is closing, or with the terminal error to answer req with (c.termID is set to req's
// id) and Serve's error.
func (c *Conn) readPayload(req *Request) (charged int64, stop bool, term *Error, err error) {
	pr, ok := c.f.(PayloadReader)
	if !ok || c.opts.Payload == nil {
		return 0, false, nil, nil
	}
	n, err := c.opts.Payload(req)
	if err == nil && (n < 0 || n > c.opts.MaxFrameBytes) {
		err = NewError(CodeInvalidRequest, fmt.Sprintf("Invalid Request: a payload of %d bytes is beyond the %d-byte frame limit", n, c.opts.MaxFrameBytes), nil)
	}
	if err != nil {
		c.termID = req.ID
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			rpcErr = NewError(CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
		}
		return 0, true, rpcErr, fmt.Errorf("jsonrpc: payload: %w", err)
	}
	if n == 0 {
		return 0, false, nil, nil
	}
	if c.opts.Budget != nil {
		if _, err := c.opts.Budget.acquire(c.closing, 0, int64(n)); err != nil {
			return 0, true, nil, nil // closing
		}
	}
	charged = int64(n)
	buf := getPayloadBuf(n)
	if c.dl != nil {
		c.setReadDeadline(time.Now().Add(c.opts.FrameTimeout))
	}
	got, err := pr.ReadPayload(buf)
	if c.dl != nil {
		c.setReadDeadline(time.Time{})
	}
	if err != nil {
		if c.isClosed() {
			return charged, true, nil, nil
		}
		c.termID = req.ID
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return charged, true, frameTimeoutError(c.opts.FrameTimeout.Milliseconds()), ErrFrameTimeout
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return charged, true, NewError(CodeInvalidRequest, fmt.Sprintf("Invalid Request: the input ended %d bytes into a %d-byte payload", got, n),
				limitData{Reason: "payload_cut_short"}), nil
		}
		return charged, true, nil, fmt.Errorf("jsonrpc: read payload: %w", err)
	}
	req.payload = buf
	return charged, false, nil, nil
}

// Payloads of pooledPayloadMin to pooledPayloadBytes are read into recycled pooledPayloadBytes buffers: a client
// streaming 1 MiB chunks reuses the same few buffers instead of having each one allocated and zeroed.
const (
	pooledPayloadBytes = 1 << 20
	pooledPayloadMin   = pooledPayloadBytes / 2
)

var payloadBufs = sync.Pool{New: func() any { b := make([]byte, pooledPayloadBytes); return &b }}

func getPayloadBuf(n int) []byte {
	if n < pooledPayloadMin || n > pooledPayloadBytes {
		return make([]byte, n)
	}
	return (*payloadBufs.Get().(*[]byte))[:n]
}

// putPayloadBuf recycles a payload buffer; the request no longer uses it.
func putPayloadBuf(b []byte) {
	if cap(b) == pooledPayloadBytes && len(b) >= pooledPayloadMin {
		b = b[:cap(b)]
		payloadBufs.Put(&b)
	}
}

// ReadPayload reads the bytes that follow the last frame: those already buffered, then straight from the
// stream into dst.
func (s *stream) ReadPayload(dst []byte) (int, error) { return s.r.readPayload(dst) }

// readPayload fills dst with the input that follows the last frame, the buffered part first. Any error is
// sticky, as ReadFrame's.
func (r *Reader) readPayload(dst []byte) (int, error) {
	if errors.Is(r.err, io.EOF) {
		return 0, io.ErrUnexpectedEOF // the last frame ended the input
	}
	if r.err != nil {
		return 0, r.err
	}
	n := copy(dst, r.buf[r.r:r.w])
	r.r += n
	if n == len(dst) {
		return n, nil
	}
	if r.rerr != nil {
		r.err = r.rerr
		if errors.Is(r.err, io.EOF) {
			r.err = io.ErrUnexpectedEOF
		}
		return n, r.err
	}
	m, err := io.ReadFull(r.src, dst[n:])
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the input ended before the whole payload, whatever was buffered
	}
	if err != nil {
		r.err = err
	}
	return n + m, err
}
