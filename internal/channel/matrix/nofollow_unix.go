//go:build unix

package matrix

import "syscall"

// oNoFollow makes an open fail on a symbolic link instead of following it (the sync state file).
const oNoFollow = syscall.O_NOFOLLOW
