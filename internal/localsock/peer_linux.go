//go:build linux

package localsock

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Peer returns the peer credentials of a Unix socket connection from SO_PEERCRED (the pid and uid of the
// process that connected, as of connect time).
func Peer(c net.Conn) (PeerCred, error) {
	rc, err := rawConn(c)
	if err != nil {
		return PeerCred{}, err
	}
	var cred *unix.Ucred
	var serr error
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return PeerCred{}, fmt.Errorf("%w: %w", ErrNoPeerCred, err)
	}
	if serr != nil {
		return PeerCred{}, fmt.Errorf("%w: SO_PEERCRED: %w", ErrNoPeerCred, serr)
	}
	pid, uid := int(cred.Pid), int(cred.Uid)
	return PeerCred{PID: pid, UID: uid, Label: unixLabel(pid, uid)}, nil
}
