//go:build unix && !linux && !darwin

package localsock

import (
	"fmt"
	"net"
	"runtime"
)

// Peer is not implemented on this platform; it always returns ErrNoPeerCred.
func Peer(c net.Conn) (PeerCred, error) {
	return PeerCred{}, fmt.Errorf("%w: not supported on %s", ErrNoPeerCred, runtime.GOOS)
}
