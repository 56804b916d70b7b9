//go:build unix

package localsock

import (
	"fmt"
	"net"
	"syscall"
)

func unixLabel(pid, uid int) string { return fmt.Sprintf("unix:pid=%d,uid=%d", pid, uid) }

// rawConn digs the raw socket out of a connection accepted from a Listener (or dialed with Dial).
func rawConn(c net.Conn) (syscall.RawConn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%w: %T has no socket", ErrNoPeerCred, c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoPeerCred, err)
	}
	return rc, nil
}
