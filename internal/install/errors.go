package install

import (
	"errors"
	"fmt"
)

var (
	// ErrLocked is matched (errors.Is) by every *LockedError.
	ErrLocked = errors.New("install: locked")
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
