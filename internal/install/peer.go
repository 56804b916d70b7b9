package install

// PeerCred identifies the process at the other end of a local connection. PID and UID are -1 when the
// platform cannot tell. Label is the audit label: "unix:pid=<pid>,uid=<uid>" on Unix, "pipe:local" on Windows.
type PeerCred struct {
	PID   int
	UID   int
	Label string
}
