//go:build unix

package jsonl

import "syscall"

// oNoFollow makes an open fail on a symbolic link instead of following it (the JSONL session files).
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes an open of a FIFO return at once instead of waiting for a writer (the JSONL import checks the
// opened file is regular before it reads).
const oNonBlock = syscall.O_NONBLOCK
