package discord

import "time"

// SetInvalidWait shortens the pause after INVALID_SESSION for tests.
func SetInvalidWait(a *Adapter, d time.Duration) { a.invalidWait = func() time.Duration { return d } }
