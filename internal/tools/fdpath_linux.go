//go:build linux

package tools

import (
	"fmt"
	"os"
)

// openedPath returns the path the kernel reports for the open file f (/proc/self/fd), and whether it could.
func openedPath(f *os.File) (string, bool) {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	return p, err == nil
}
