//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// rmdirAt removes the empty directory rel of root with unlinkat(AT_REMOVEDIR) on its parent's descriptor:
// the last component is never followed, and a file or link put there since the caller's Lstat is refused
// (ENOTDIR), not removed.
func rmdirAt(root *os.Root, rel string) error {
	parent, err := root.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer parent.Close()
	if err := unix.Unlinkat(int(parent.Fd()), filepath.Base(rel), unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "rmdir", Path: rel, Err: err}
	}
	return nil
}

// isNotEmpty reports a directory that holds something (POSIX allows EEXIST as well as ENOTEMPTY).
func isNotEmpty(err error) bool {
	return errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)
}
