//go:build unix

package store

import "syscall"

// oNoFollow makes an open fail on a symbolic link instead of following it (the prune log in data/state).
const oNoFollow = syscall.O_NOFOLLOW
