//go:build unix

package legacy

import (
	"os"
	"syscall"
)

// sameDevice reports whether a and b live on the same filesystem (so a rename between them can work). Unknown
// is reported as true: the rename itself will then say.
func sameDevice(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return true
	}
	sa, okA := fa.Sys().(*syscall.Stat_t)
	sb, okB := fb.Sys().(*syscall.Stat_t)
	if !okA || !okB {
		return true
	}
	return sa.Dev == sb.Dev
}
