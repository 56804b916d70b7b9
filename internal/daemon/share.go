//go:build !zeroclaw_e2e

package daemon

// sharedInstall reports whether this daemon may run beside another on the same install. Production builds never
// do (state.md §1: one daemon per install); only a binary built with the zeroclaw_e2e tag, for the end-to-end
// test of two schedulers on one jobs.db, honours ZEROCLAW_E2E_SHARE_INSTALL (share_e2e.go).
func sharedInstall(func(string) string) bool { return false }
