//go:build unix

package gateway

import "syscall"

// fdLimit is the soft RLIMIT_NOFILE (0 when unknown).
func fdLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}
