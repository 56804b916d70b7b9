//go:build unix

package upload

import "syscall"

const (
	// oNoFollow makes an open fail on a symbolic link instead of following it.
	oNoFollow = syscall.O_NOFOLLOW
	// oNonBlock keeps an open of a FIFO a client names from waiting for a writer; the file is then refused as
	// not regular.
	oNonBlock = syscall.O_NONBLOCK
)
