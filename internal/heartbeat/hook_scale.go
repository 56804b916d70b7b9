//go:build zeroclaw_crashhooks

package heartbeat

import (
	"os"
	"time"
)

// In a test build, ZEROCLAW_TEST_HEARTBEAT_MINUTE=<duration> is the length of a [heartbeat] minute, so the
// end-to-end tests drive the real binary through slots (and kill it mid-run) in seconds.
func init() {
	if d, err := time.ParseDuration(os.Getenv("ZEROCLAW_TEST_HEARTBEAT_MINUTE")); err == nil && d > 0 {
		minute = d
	}
}
