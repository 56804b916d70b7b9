//go:build windows

package localsock

import (
	"net"

	"golang.org/x/sys/windows"
)

// Peer labels a named-pipe client "pipe:local" with UID -1 (Windows has no uid; the pipe's security descriptor
// already limits clients to the daemon's user and SYSTEM). PID is the client's process id when the pipe can
// report it, else -1.
func Peer(c net.Conn) (PeerCred, error) {
	pid := -1
	if f, ok := c.(interface{ Fd() uintptr }); ok {
		var p uint32
		if windows.GetNamedPipeClientProcessId(windows.Handle(f.Fd()), &p) == nil {
			pid = int(p)
		}
	}
	return PeerCred{PID: pid, UID: -1, Label: "pipe:local"}, nil
}
