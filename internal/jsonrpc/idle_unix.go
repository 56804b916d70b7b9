//go:build unix

package jsonrpc

import (
	"io"
	"os"
	"syscall"
)

// idleSocket reads a socket between frames without holding a buffer while it waits: the poller calls read once
// the socket is readable, and only then is a pooled buffer taken (it goes back to the pool when the read finds
// nothing after all). Waiting and reading are one step, so a frame costs the same read system calls as a plain
// blocking Read. It is built once per Reader, so a wait allocates nothing.
type idleSocket struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool // rc.Read's callback, bound to this idleSocket

	buf *smallBuf // the buffer the last read filled, nil if none
	n   int
	err error // the last read's error other than EAGAIN (io.EOF for the end)
}

// newIdleSocket returns an idleSocket on src, or nil when src is not a socket that allows it.
func newIdleSocket(src io.Reader) *idleSocket {
	sc, ok := src.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &idleSocket{rc: rc}
	s.fn = s.tryRead
	return s
}

// tryRead is the poller's callback: one read into a pooled buffer; false (wait, holding nothing) when the
// socket has no input yet.
func (s *idleSocket) tryRead(fd uintptr) bool {
	b := getSmallBuf()
	for {
		n, err := syscall.Read(int(fd), b[:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			putSmallBuf(b)
			return false
		case err != nil:
			putSmallBuf(b)
			s.err = os.NewSyscallError("read", err)
		case n == 0:
			putSmallBuf(b)
			s.err = io.EOF
		default:
			s.buf, s.n = b, n
		}
		return true
	}
}

// read waits until the socket is readable and reads it. It returns the filled buffer and the count, or the
// read's error (io.EOF at the end), or (nil, 0, nil) when the wait ended without a read (a deadline, a closed
// socket): the caller's ordinary Read then reports that as usual.
func (s *idleSocket) read() (*smallBuf, int, error) {
	s.buf, s.n, s.err = nil, 0, nil
	_ = s.rc.Read(s.fn)
	b, n, err := s.buf, s.n, s.err
	s.buf = nil
	return b, n, err
}
