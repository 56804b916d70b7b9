package install

import (
	"errors"
	"fmt"
	"io/fs"
)

// LockState is what ProbeLock found at a lock path.
type LockState struct {
	Exists bool // a lock file is there
	Held   bool // an open file (a live daemon, or this process) holds it
	PID    int  // the pid the file records: the holder's when Held, else the last owner's (0 if none)
}

// ProbeLock tells whether the lock at path is held, without creating the file or changing its content: the
// doctor and restore inspect an install that may have a daemon. Taking the lock for an instant to find it free
// is the only way to know; it is released at once.
func ProbeLock(path string) (LockState, error) {
	f, err := openProbe(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LockState{}, nil
	}
	if err != nil {
		return LockState{}, fmt.Errorf("install: probe lock %s: %w", path, err)
	}
	defer f.Close()
	held, err := tryLock(f)
	if err != nil {
		return LockState{}, fmt.Errorf("install: probe lock %s: %w", path, err)
	}
	if held {
		return LockState{Exists: true, Held: true, PID: holderPID(f)}, nil
	}
	pid, _ := readPID(f)
	if err := unlock(f); err != nil {
		return LockState{}, fmt.Errorf("install: probe lock %s: %w", path, err)
	}
	return LockState{Exists: true, PID: pid}, nil
}
