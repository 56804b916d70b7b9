// Package localsock is the daemon's local transport: it takes ownership of the endpoint (a Unix socket guarded by
// <endpoint>.lock, or a named pipe on Windows; protocol.md §1.1), dials it, and tells who is at the other end of
// a connection (peer credentials).
package localsock

// PeerCred identifies the process at the other end of a local connection. PID and UID are -1 when the
// platform cannot tell. Label is the audit label: "unix:pid=<pid>,uid=<uid>" on Unix, "pipe:local" on Windows.
type PeerCred struct {
	PID   int
	UID   int
	Label string
}
