//go:build !unix

package workspace

import (
	"errors"
	"os"
	"syscall"
)

// rmdirAt removes the empty directory rel of root (Root.Remove: RemoveDirectory refuses a non-empty one).
func rmdirAt(root *os.Root, rel string) error { return root.Remove(rel) }

// isNotEmpty reports a directory that holds something (ERROR_DIR_NOT_EMPTY on Windows).
func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.Errno(145)) || errors.Is(err, syscall.ENOTEMPTY)
}
