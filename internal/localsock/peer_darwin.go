//go:build darwin

package localsock

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Peer returns the peer credentials of a Unix socket connection: the uid from LOCAL_PEERCRED and, best effort,
// the pid from LOCAL_PEERPID (-1 if unavailable).
func Peer(c net.Conn) (PeerCred, error) {
	rc, err := rawConn(c)
	if err != nil {
		return PeerCred{}, err
	}
	var (
		cred       *unix.Xucred
		pid        int
		serr, perr error
	)
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		pid, perr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return PeerCred{}, fmt.Errorf("%w: %w", ErrNoPeerCred, err)
	}
	if serr != nil {
		return PeerCred{}, fmt.Errorf("%w: LOCAL_PEERCRED: %w", ErrNoPeerCred, serr)
	}
	if perr != nil {
		pid = -1
	}
	uid := int(cred.Uid)
	return PeerCred{PID: pid, UID: uid, Label: unixLabel(pid, uid)}, nil
}
