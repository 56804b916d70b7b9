//go:build windows

package install

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// openLock opens (creating it if absent) the lock file at path without following a symlink or other reparse
// point and without changing its content, and refuses anything but a regular file with an *UnsafeLockError.
// Ownership is not checked: the lock files live in the user's own data dir here (the endpoint is a named pipe).
func openLock(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("install: open lock %s: %w", path, err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_ALWAYS,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, &UnsafeLockError{Path: path, Problem: describeType(fi.Mode()), UID: -1}
		}
		return nil, fmt.Errorf("install: open lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(h), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("install: stat lock %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &UnsafeLockError{Path: path, Problem: describeType(fi.Mode()), UID: -1}
	}
	return f, nil
}

// Windows byte-range locks are mandatory, so we lock one byte far past the pid text: readers can still read
// the pid while the lock is held.
const lockOffsetHigh = 0x7fffffff

func tryLock(f *os.File) (held bool, err error) {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err = windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
