//go:build !unix

package legacy

// sameDevice cannot tell on this platform; the rename itself reports a cross-device move.
func sameDevice(a, b string) bool { return true }
