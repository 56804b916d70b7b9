package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// DefaultMaxFrameBytes is the protocol's frame size limit (protocol.md §2.1).
const DefaultMaxFrameBytes = 8 << 20

// The read buffer starts at minReadBuffer, doubles up to maxReadBuffer while one frame outgrows it, and is
// replaced by a minReadBuffer one when the Reader is about to wait for input between frames with nothing
// buffered: an idle connection holds 4 KiB whatever it received before. On a socket it holds none: between
// frames the Reader gives its minReadBuffer buffer back to a shared pool, waits for the socket to be readable,
// and takes one again. Together with the frame limit, maxReadBuffer bounds the memory one line can take.
const (
	minReadBuffer = 4 << 10
	maxReadBuffer = 64 << 10
)

// Reader reads NDJSON frames. Each frame is one line with its surrounding whitespace trimmed (so CRLF
// works); blank lines are skipped; invalid UTF-8 is replaced with U+FFFD. A returned frame is never longer
// than the limit and is owned by the caller.
//
// The limit applies to the trimmed line; the Reader keeps at most limit+1 bytes of one line (room for one
// trailing byte of whitespace such as the '\r' of CRLF) and stops reading a longer line at that point:
// ReadFrame then returns ErrFrameTooLarge and the rest of the line stays unread. Errors are sticky: after
// any error (including io.EOF) every later call returns the same error. A last line without "\n" is
// returned as a frame when the input ends. A Reader is not safe for concurrent use.
type Reader struct {
	// OnFrameStart, if set, is called from ReadFrame when the first non-whitespace byte of a new frame has
	// arrived and the rest of the frame has not, before the rest is read (a frame that arrives whole does not
	// call it). Conn uses it to arm the unfinished-frame deadline, so
	// idle time (and blank lines) between frames is not limited.
	OnFrameStart func()
	// Grow, if set, is called before the frame's buffer grows, with the bytes it is about to add (the buffer is
	// per frame and handed to the caller with it). It may block; an error ends the Reader with that error.
	// Conn uses it to charge large frames to its Budget.
	Grow func(n int) error

	src  io.Reader
	buf  []byte // buf[r:w] has been read from src and not yet consumed
	r, w int
	rerr error // src's error, returned once buf is consumed
	// idleWait says whether fill waits for src to be readable without a buffer between frames (idleWaits, through
	// idle).
	idleWait int
	idle     *idleSocket
	small    *smallBuf // buf's backing array when it came from smallBuffers
	max      int
	err      error
	hint     int // the buffer size a large frame starts with: the last large frame's length and some room

	size, peak atomic.Int64 // len(buf) and its largest value, for tests
}

// NewReader returns a Reader on r for frames of at most maxFrameBytes (DefaultMaxFrameBytes if <= 0).
func NewReader(r io.Reader, maxFrameBytes int) *Reader {
	if maxFrameBytes <= 0 {
		maxFrameBytes = DefaultMaxFrameBytes
	}
	return &Reader{src: r, max: maxFrameBytes}
}

// ReadFrame returns the next non-blank frame, ErrFrameTooLarge, io.EOF at the end of input, or the
// underlying reader's error.
func (r *Reader) ReadFrame() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	var (
		buf     []byte
		started bool
		idle    int // reads in a row that returned nothing
	)
	for {
		if r.r == r.w && started && r.rerr == nil && len(r.buf) == maxReadBuffer && len(buf) < cap(buf) {
			// A large frame under way with room left in its own buffer: read into that buffer directly instead
			// of through r.buf and a copy. At most maxReadBuffer bytes at a time, so what follows the newline
			// (the next frames) fits in r.buf, where it is kept.
			end := min(cap(buf), len(buf)+maxReadBuffer)
			n, err := r.src.Read(buf[len(buf):end])
			if err != nil {
				r.rerr = err
			}
			if n == 0 {
				if idle++; err == nil && idle < 100 { // an io.Reader may return 0, nil; give up as bufio does
					continue
				}
				if err == nil {
					r.rerr = io.ErrNoProgress
				}
				continue // fill reports r.rerr (a last line without "\n" at io.EOF) below
			}
			idle = 0
			seg := buf[len(buf) : len(buf)+n]
			if nl := bytes.IndexByte(seg, '\n'); nl >= 0 {
				r.r, r.w = 0, copy(r.buf, seg[nl+1:])
				return r.finish(buf[:len(buf)+nl])
			}
			buf = buf[:len(buf)+n]
			continue
		}
		if r.r == r.w {
			if err := r.fill(started, len(buf)); err != nil {
				if errors.Is(err, io.EOF) && started {
					r.err = io.EOF
					return r.finish(buf)
				}
				r.err = err
				return nil, err
			}
		}
		chunk := r.buf[r.r:r.w]
		nl := bytes.IndexByte(chunk, '\n')
		seg := chunk
		if nl >= 0 {
			seg = chunk[:nl]
		}
		if !started {
			i := 0
			for i < len(seg) && isSpace(seg[i]) {
				i++
			}
			seg = seg[i:]
			if len(seg) > 0 {
				started = true
				// A frame whose end is already buffered cannot stall: only an unfinished one arms the deadline.
				if r.OnFrameStart != nil && nl < 0 {
					r.OnFrameStart()
				}
			}
		}
		if len(seg) > 0 {
			if len(buf)+len(seg) > r.max+1 {
				r.err = ErrFrameTooLarge
				return nil, r.err
			}
			if need := len(buf) + len(seg); need > cap(buf) {
				c := growCap(cap(buf), need, r.max+1)
				if need > maxReadBuffer && r.hint > c {
					// Large frames tend to come in runs of one size (upload chunks): the size of the last one
					// is allocated at once rather than grown to by doubling (each step zeroes and copies).
					c = min(r.hint, r.max+1)
				}
				if r.Grow != nil {
					if err := r.Grow(c - cap(buf)); err != nil {
						r.err = err
						return nil, err
					}
				}
				nb := make([]byte, len(buf), c)
				copy(nb, buf)
				buf = nb
			}
			buf = append(buf, seg...)
		}
		if nl >= 0 {
			r.r += nl + 1
		} else {
			r.r = r.w
		}
		if nl >= 0 && started {
			return r.finish(buf)
		}
	}
}

// fill reads more input into the empty buffer. Between frames (!inFrame) a buffer grown for a large frame is
// first replaced by a small one; a frame that has outgrown the buffer (frameLen bytes so far) doubles it.
func (r *Reader) fill(inFrame bool, frameLen int) error {
	if r.rerr != nil {
		return r.rerr
	}
	r.r, r.w = 0, 0
	if !inFrame && r.idleWait != noIdleWait {
		// Between frames with nothing buffered: wait without a buffer, where the source allows it; the read that
		// ends the wait takes one.
		r.releaseBuffer()
		if r.idleWait == idleWaitUnknown {
			if r.idle = newIdleSocket(r.src); r.idle != nil {
				r.idleWait = idleWaits
			} else {
				r.idleWait = noIdleWait
			}
		}
		if r.idle != nil {
			b, n, err := r.idle.read()
			if b != nil {
				r.useSmall(b)
				r.w = n
				return nil
			}
			if err != nil {
				r.rerr = err
				return err
			}
			// The wait ended without a read (a deadline, a closed socket): the Read below reports it.
		}
	}
	switch {
	case r.buf == nil:
		if r.idleWait == idleWaits {
			r.useSmall(getSmallBuf())
			break
		}
		r.setBuffer(minReadBuffer)
	case !inFrame && len(r.buf) > minReadBuffer:
		r.setBuffer(minReadBuffer)
	case inFrame && frameLen >= len(r.buf) && len(r.buf) < maxReadBuffer:
		r.setBuffer(min(2*len(r.buf), maxReadBuffer))
	}
	for range 100 { // an io.Reader may return 0, nil; give up as bufio does
		n, err := r.src.Read(r.buf)
		r.w = n
		if err != nil {
			r.rerr = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	r.rerr = io.ErrNoProgress
	return r.rerr
}

// smallBuf is a minReadBuffer-byte read buffer; smallBuffers holds those idle sockets gave back (as array
// pointers, so giving one back allocates nothing).
type smallBuf [minReadBuffer]byte

var smallBuffers = sync.Pool{New: func() any { return new(smallBuf) }}

func getSmallBuf() *smallBuf  { return smallBuffers.Get().(*smallBuf) }
func putSmallBuf(b *smallBuf) { smallBuffers.Put(b) }

// useSmall makes the pooled b the read buffer.
func (r *Reader) useSmall(b *smallBuf) {
	r.small, r.buf = b, b[:]
	r.size.Store(minReadBuffer)
	r.peak.Store(max(r.peak.Load(), minReadBuffer))
}

// idleWait values: whether the source can be waited on without a buffer (found out at the first wait).
const (
	idleWaitUnknown = iota
	idleWaits
	noIdleWait
)

// releaseBuffer gives a minReadBuffer buffer back to the pool (a larger one is left to the GC) and leaves the
// Reader without one. Nothing may be buffered.
func (r *Reader) releaseBuffer() {
	if r.small != nil {
		putSmallBuf(r.small)
		r.small = nil
	}
	r.buf = nil
	r.size.Store(0)
}

func (r *Reader) setBuffer(n int) {
	if r.small != nil { // a frame outgrew the pooled buffer: it goes back
		putSmallBuf(r.small)
		r.small = nil
	}
	r.buf = make([]byte, n)
	r.size.Store(int64(n))
	if int64(n) > r.peak.Load() {
		r.peak.Store(int64(n))
	}
}

// bufferSize and peakBufferSize report the read buffer's size now and at most so far (for tests).
func (r *Reader) bufferSize() int     { return int(r.size.Load()) }
func (r *Reader) peakBufferSize() int { return int(r.peak.Load()) }

// finish trims and sanitizes a complete line and applies the limit to the result.
func (r *Reader) finish(line []byte) ([]byte, error) {
	end := len(line)
	for end > 0 && isSpace(line[end-1]) {
		end--
	}
	line = line[:end]
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	if len(line) > r.max {
		r.err = ErrFrameTooLarge
		return nil, r.err
	}
	if len(line) > maxReadBuffer {
		r.hint = len(line) + minReadBuffer // room for a few more digits in the next one
	}
	return line, nil
}

// growCap is the next capacity of a frame buffer that must hold need bytes: geometric growth, but never beyond
// limit, so a frame near the limit does not allocate twice the limit; past half the limit it goes straight to
// the limit rather than stopping one byte short of it and growing again.
func growCap(old, need, limit int) int {
	c := max(2*old, need, 512)
	if c > limit/2 {
		return limit
	}
	return c
}
