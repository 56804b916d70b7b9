package jsonrpc

import (
	"io"
	"time"
)

// Framer carries whole frames between a Conn and one transport. Conn does everything else (validation, dispatch,
// the outbound queue, limits and the shutdown sequence), so a new transport is one small Framer:
//
//   - NDJSON over a byte stream (a Unix socket, a TCP connection, a pipe): NewStream. It has Deadlines and,
//     on a socket, HalfCloser.
//   - One message per WebSocket text message (github.com/coder/websocket): ReadFrame reads one message with the
//     read limit set to lim.Max+1 and returns ErrFrameTooLarge past lim.Max, calling lim.Grow before it
//     buffers the payload; WriteFrame writes frame[:len(frame)-1] as one text message and returns 0 or
//     len(frame); Close sends the close frame. That library bounds a read with a context whose end closes the
//     connection, so such a framer leaves out Deadlines (or implements them over its own read goroutine): Conn
//     then enforces neither FrameTimeout nor WriteTimeout, and its Close closes the framer at once.
//   - Stdio (the ACP bridge): NewStream over a ReadWriteCloser joining stdin and stdout. Made non-blocking
//     (os.NewFile on a descriptor in non-blocking mode), stdin gets read deadlines from the runtime poller; a
//     joining type that forwards SetReadDeadline/SetWriteDeadline to the two files gives Conn Deadlines.
//
// Conn calls ReadFrame from one goroutine and WriteFrame from one goroutine at a time (never two writes at
// once); Close may be called concurrently with both and more than once.
type Framer interface {
	// ReadFrame returns the next inbound frame: one JSON text without its framing, owned by the caller. It
	// honours lim (see FrameLimits), returns io.EOF at a clean end of input, and after any error it is not
	// called again.
	ReadFrame(lim *FrameLimits) ([]byte, error)
	// WriteFrame writes one frame: a compact JSON text followed by "\n" (NDJSON's terminator; a framer that
	// carries one message per transport message drops it). It returns how many bytes of frame went out; after a
	// write-deadline error Conn writes the rest first when it flushes (a message framer returns 0 or
	// len(frame)). frame must not be kept after WriteFrame returns: its buffer is reused.
	WriteFrame(frame []byte) (int, error)
	// Close closes the transport: a blocked ReadFrame or WriteFrame returns.
	Close() error
}

// FrameLimits is what Conn asks of every ReadFrame.
type FrameLimits struct {
	// Max is the largest frame in bytes. A longer one is ErrFrameTooLarge, read no further than the transport
	// allows.
	Max int
	// Grow, if set, must be called before the frame's buffer grows, with the bytes about to be added. It may block
	// (Conn charges its Budget there); its error ends ReadFrame with that error.
	Grow func(n int) error
	// Started, if set, is called when a frame has begun to arrive but has not arrived whole, before the rest is
	// read (a frame that arrives whole does not call it). Conn arms FrameTimeout there, so idle time between
	// frames is never limited. A framer that cannot tell leaves it uncalled.
	Started func()
}

// Deadlines is implemented by a framer whose reads and writes can be bounded in time, as net.Conn's are: a
// blocked call returns an error matching os.ErrDeadlineExceeded once its deadline passes. With it Conn enforces
// FrameTimeout and WriteTimeout, and Close interrupts a read without closing the transport, so the frames still
// queued are flushed. Without it Close closes the framer at once and the queued frames are dropped.
type Deadlines interface {
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

// HalfCloser is implemented by a byte-stream framer whose peer would see a connection reset if it were closed
// with unread input. After a terminal error frame (and after the final flush of a write stall) Conn calls
// CloseWrite, sets a read deadline and calls DiscardInput, so the peer reads the last frame and then EOF. Conn
// uses it only on a framer that also has Deadlines.
type HalfCloser interface {
	// CloseWrite ends our direction: the peer reads EOF after what was written.
	CloseWrite() error
	// DiscardInput reads and drops the peer's input until EOF, an error (such as the read deadline) or max bytes.
	DiscardInput(max int64)
}

// NewStream returns a Framer of NDJSON frames (one per line, see Reader) over a byte stream. The framer has
// Deadlines when rwc has SetReadDeadline and SetWriteDeadline (net.Conn, *os.File), and HalfCloser when it also
// has CloseWrite (*net.UnixConn, *net.TCPConn).
func NewStream(rwc io.ReadWriteCloser) Framer {
	s := &stream{rwc: rwc, r: NewReader(rwc, 0)}
	d, ok := rwc.(Deadlines)
	if !ok {
		return s
	}
	ds := &deadlineStream{stream: s, Deadlines: d}
	cw, ok := rwc.(interface{ CloseWrite() error })
	if !ok {
		return ds
	}
	return &socketStream{deadlineStream: ds, cw: cw}
}

// stream is NDJSON over a byte stream without deadlines.
type stream struct {
	rwc io.ReadWriteCloser
	r   *Reader // used by ReadFrame only
}

func (s *stream) ReadFrame(lim *FrameLimits) ([]byte, error) {
	s.r.max = lim.Max
	if s.r.max <= 0 {
		s.r.max = DefaultMaxFrameBytes
	}
	s.r.Grow, s.r.OnFrameStart = lim.Grow, lim.Started
	return s.r.ReadFrame()
}

func (s *stream) WriteFrame(frame []byte) (int, error) { return s.rwc.Write(frame) }

// coalescer is a framer over a byte stream, to which several queued frames may be written as one byte slice.
type coalescer interface{ coalesces() }

func (s *stream) coalesces() {}

func (s *stream) Close() error { return s.rwc.Close() }

// deadlineStream adds the transport's deadlines.
type deadlineStream struct {
	*stream
	Deadlines
}

// socketStream adds half-close.
type socketStream struct {
	*deadlineStream
	cw interface{ CloseWrite() error }
}

func (s *socketStream) CloseWrite() error { return s.cw.CloseWrite() }

func (s *socketStream) DiscardInput(max int64) {
	_, _ = io.Copy(io.Discard, io.LimitReader(s.rwc, max))
}
