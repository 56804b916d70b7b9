package localsock

import (
	"errors"
	"fmt"
)

// The messages keep the "install:" prefix they had when this package was part of install: they reach users
// (CLI errors, logs) unchanged.
var (
	// ErrInUse is matched (errors.Is) by every *InUseError.
	ErrInUse = errors.New("install: endpoint in use")
	// ErrNotSocket is returned, wrapped with the path, when the endpoint path exists and is not a socket.
	// Such a path is never removed.
	ErrNotSocket = errors.New("install: path exists and is not a socket")
	// ErrNotRunning is returned by Dial, together with the underlying error, when nothing serves the endpoint.
	ErrNotRunning = errors.New("install: no daemon is serving the endpoint")
	// ErrNoPeerCred is returned by Peer for a connection whose peer credentials cannot be read.
	ErrNoPeerCred = errors.New("install: peer credentials unavailable")
)

// InUseError reports an endpoint served (or owned through its lock) by another daemon. PID is 0 when unknown.
type InUseError struct {
	Endpoint string
	PID      int
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("another daemon (pid %d) is serving %s", e.PID, e.Endpoint)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }
