//go:build unix

package heartbeat

import "syscall"

// openFlags refuse a symbolic link at HEARTBEAT.md itself and never block on a FIFO put there.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
