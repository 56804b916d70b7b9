//go:build unix

package install

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openLock opens (creating it 0600 if absent) the lock file at path without following a symlink, without
// blocking on a FIFO and without changing its content, then checks through the open descriptor that it is a
// regular file with a single link, owned by us. A lock path can sit in a shared directory (a socket in /tmp)
// where another user may have planted something: anything else is an *UnsafeLockError and is left untouched.
func openLock(path string) (*os.File, error) {
	fd, err := openNoFollow(path)
	if err != nil {
		// O_NOFOLLOW fails with ELOOP (EMLINK on some BSDs) on a symlink; a directory, socket or device fails
		// in its own way, and another user's file with EACCES (its mode, or Linux's protected_regular in a
		// sticky dir). Name what is there rather than the errno.
		if fi, lerr := os.Lstat(path); lerr == nil {
			if !fi.Mode().IsRegular() {
				return nil, &UnsafeLockError{Path: path, Problem: describeType(fi.Mode()), UID: -1}
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
				return nil, foreignOwner(path, int(st.Uid))
			}
		}
		return nil, fmt.Errorf("install: open lock %s: %w", path, err)
	}
	// O_NONBLOCK only kept the open from waiting on a FIFO; the descriptor is kept for the daemon's life.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("install: open lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := checkLockFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func openNoFollow(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0o600)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// checkLockFile refuses an open lock file that is not a regular file, belongs to another user, or has other
// names (a hard link planted in a shared dir: truncating it would destroy the file it also names).
func checkLockFile(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("install: stat lock %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return &UnsafeLockError{Path: path, Problem: describeType(fi.Mode()), UID: -1}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("install: stat lock %s: no owner information", path)
	}
	if int(st.Uid) != os.Geteuid() {
		return foreignOwner(path, int(st.Uid))
	}
	if st.Nlink != 1 {
		return &UnsafeLockError{Path: path, Problem: fmt.Sprintf("has %d hard links", st.Nlink), UID: -1}
	}
	return nil
}

// foreignOwner is the refusal of a lock file owned by uid, naming that user: whatever pid it holds was written
// by them and proves nothing about a daemon of ours.
func foreignOwner(path string, uid int) *UnsafeLockError {
	owner := lookupUser(uid)
	who := "uid " + strconv.Itoa(uid)
	if owner != "" {
		who += " (" + owner + ")"
	}
	return &UnsafeLockError{Path: path, UID: uid, Owner: owner,
		Problem: fmt.Sprintf("belongs to %s, not to you (uid %d)", who, os.Geteuid())}
}

// tryLock takes an exclusive flock without blocking; held reports that another open file holds it.
func tryLock(f *os.File) (held bool, err error) {
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// lookupUser is uid's login name, or "" when it cannot be resolved.
func lookupUser(uid int) string {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return ""
	}
	return u.Username
}
