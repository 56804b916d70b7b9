//go:build unix

package store

import "syscall"

// oNoFollow makes an open fail on a symbolic link instead of following it (the JSONL session files).
const oNoFollow = syscall.O_NOFOLLOW
