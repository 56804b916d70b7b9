//go:build unix

package install

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openProbe opens an existing lock file read-only, never following a symlink nor blocking on a FIFO.
func openProbe(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
