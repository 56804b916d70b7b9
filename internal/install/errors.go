package install

import (
	"errors"
	"fmt"
)

var (
	// ErrLocked is matched (errors.Is) by every *LockedError.
	ErrLocked = errors.New("install: locked")
	// ErrInUse is matched (errors.Is) by every *InUseError.
	ErrInUse = errors.New("install: endpoint in use")
	// ErrNotSocket is returned, wrapped with the path, when the endpoint path exists and is not a socket.
	// Such a path is never removed.
	ErrNotSocket = errors.New("install: path exists and is not a socket")
	// ErrNotRunning is returned by Dial, together with the underlying error, when nothing serves the endpoint.
	ErrNotRunning = errors.New("install: no daemon is serving the endpoint")
	// ErrNoPeerCred is returned by Peer for a connection whose peer credentials cannot be read.
	ErrNoPeerCred = errors.New("install: peer credentials unavailable")
	// ErrUnsafeLock is matched (errors.Is) by every *UnsafeLockError.
	ErrUnsafeLock = errors.New("install: unsafe lock file")
)

// UnsafeLockError reports a lock path that is not ours to use: a symbolic link, something other than a
// regular file, a file with other hard links, or a file owned by another user. Nothing was written to it. When
// the file belongs to another user, UID is that user (Owner their name, "" if unknown) and no pid read from the
// file is reported: another user can write anything there. UID is -1 otherwise.
type UnsafeLockError struct {
	Path    string
	Problem string // what is wrong, completing "it ...": "is a symbolic link", "belongs to uid 65534 (nobody)"
	UID     int
	Owner   string
}

func (e *UnsafeLockError) Error() string {
	return fmt.Sprintf("install: refusing to use lock file %s: it %s", e.Path, e.Problem)
}

// Is makes errors.Is(err, ErrUnsafeLock) true.
func (e *UnsafeLockError) Is(target error) bool { return target == ErrUnsafeLock }

// LockedError reports a lock file held by another owner. PID is the pid the owner wrote into the file, or 0
// if it could not be read.
type LockedError struct {
	Path string
	PID  int
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("install: %s is held by another daemon (pid %d)", e.Path, e.PID)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

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
