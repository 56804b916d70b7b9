//go:build unix

package jsonrpc

import (
	"io"
	"syscall"
)

// waitReadable blocks until src has input (or an end or error to report) without holding a buffer, when src is
// a socket; it reports whether it waited. A deadline or a closed socket ends the wait: the Read that follows
// reports it as usual.
func waitReadable(src io.Reader) bool {
	sc, ok := src.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var peek [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), peek[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Not readable yet: the poller waits and calls again. Anything else (bytes, the end, an error) is for
		// the Read that follows.
		return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
	})
	return true
}
