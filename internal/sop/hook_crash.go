//go:build zeroclaw_crashhooks && unix

package sop

import (
	"os"
	"syscall"
)

// In a test build, ZEROCLAW_TEST_CRASH_AT=<point> kills the process with SIGKILL at that point of a SOP write:
// exactly what kill -9 there would do.
func init() {
	want := os.Getenv("ZEROCLAW_TEST_CRASH_AT")
	if want == "" {
		return
	}
	crashAt = func(point string) {
		if point == want {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}
