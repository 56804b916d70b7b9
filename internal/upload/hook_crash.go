//go:build zeroclaw_crashhooks && unix

package upload

import (
	"os"
	"syscall"
)

// In a test build (-tags zeroclaw_crashhooks), ZEROCLAW_TEST_CRASH_AT=<point> kills the process with SIGKILL when
// a write reaches that point: exactly what kill -9 there would do.
func init() {
	want := os.Getenv("ZEROCLAW_TEST_CRASH_AT")
	if want == "" {
		return
	}
	crashAt = func(point string) {
		if point == want {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way; nothing more happens here
		}
	}
}
