//go:build !linux

package tools

import "os"

// openedPath reports that this platform gives no path for an open file: only the inode checks apply.
func openedPath(*os.File) (string, bool) { return "", false }
