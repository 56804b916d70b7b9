//go:build zeroclaw_e2e

package daemon

// EnvShareInstall, set to 1 in a binary built with the zeroclaw_e2e tag, skips the install lock so a second
// daemon (on its own socket) can share an install: the end-to-end test of two schedulers claiming one jobs.db.
const EnvShareInstall = "ZEROCLAW_E2E_SHARE_INSTALL"

func sharedInstall(getenv func(string) string) bool { return getenv(EnvShareInstall) == "1" }
