package install

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Lock is an exclusive, non-blocking, advisory lock on a file that records the owner's pid. The file is created
// 0600 and never unlinked (unlinking would let two owners lock two different inodes under one name). The lock
// belongs to the open file, so it is released by Release or when the process exits, however it exits.
type Lock struct {
	path string
	prev int // the pid the file recorded before this lock overwrote it (0 if none)

	mu sync.Mutex // guards f
	f  *os.File   // nil once released
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// PrevPID is the pid the file recorded before this lock replaced it with ours (0 if none): the last owner's.
// Listen uses it to name a server that serves the endpoint without holding its lock.
func (l *Lock) PrevPID() int { return l.prev }

// AcquireLock takes the lock at path without blocking, creating the file (0600) if needed, and once it holds
// the lock replaces the file's content with the caller's pid. If another open file holds it (another process,
// or another AcquireLock in this process) it returns a *LockedError naming the pid recorded by the holder.
// A path that is a symlink, not a regular file, hard-linked, or owned by another user is refused with an
// *UnsafeLockError and left untouched, so a pid is only ever read from a file of ours.
func AcquireLock(path string) (*Lock, error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	// Nothing is written before the lock is held: a loser never truncates the holder's pid.
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("install: lock %s: %w", path, err)
	}
	if held {
		pid := holderPID(f)
		f.Close()
		return nil, &LockedError{Path: path, PID: pid}
	}
	prev, _ := readPID(f)
	if err := writePID(f); err != nil {
		f.Close() // closing drops the lock
		return nil, fmt.Errorf("install: write pid to %s: %w", path, err)
	}
	return &Lock{path: path, prev: prev, f: f}, nil
}

// LockInstall takes the install-wide lock <data>/daemon.lock, creating the data dir (0700) if needed.
func LockInstall(l Layout) (*Lock, error) {
	if err := os.MkdirAll(l.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("install: create data dir: %w", err)
	}
	return AcquireLock(l.InstallLockPath())
}

// Release drops the lock. The file and its pid stay on disk: the pid is only believed while the file is locked.
// Release is idempotent.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	uerr := unlock(f)
	cerr := f.Close()
	if uerr != nil {
		return fmt.Errorf("install: unlock %s: %w", l.path, uerr)
	}
	if cerr != nil {
		return fmt.Errorf("install: close lock %s: %w", l.path, cerr)
	}
	return nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return err
	}
	return f.Sync()
}

// holderPID reads the holder's pid. The holder truncates and rewrites the file right after locking, so an
// empty read is retried briefly before giving up with 0.
func holderPID(f *os.File) int {
	for range 20 {
		if pid, ok := readPID(f); ok {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}

func readPID(f *os.File) (int, bool) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// describeType completes "it ..." for a lock path that is not a regular file.
func describeType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "is a symbolic link"
	case t&fs.ModeDir != 0:
		return "is a directory"
	case t&fs.ModeNamedPipe != 0:
		return "is a named pipe"
	case t&fs.ModeSocket != 0:
		return "is a socket"
	case t&fs.ModeDevice != 0:
		return "is a device"
	}
	return "is not a regular file"
}
