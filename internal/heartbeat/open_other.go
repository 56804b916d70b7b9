//go:build !unix

package heartbeat

// openFlags: os.Root alone keeps the open inside the workspace here.
const openFlags = 0
