package doctor

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// checkDaemon reports whether a daemon holds the install lock, stale locks and sockets, and who owns the
// endpoint. It returns whether a daemon is live.
func checkDaemon(r *report, o Options) bool {
	lockPath := o.Layout.InstallLockPath()
	st, err := install.ProbeLock(lockPath)
	if err != nil {
		r.fail(CategoryDaemon, "lock-unreadable", lockPath, fmt.Sprintf("cannot tell whether a daemon runs: %v", err),
			"remove "+lockPath+" if it is not a regular file owned by you, then start the daemon again")
		return false
	}
	live := st.Held
	switch {
	case st.Held:
		r.ok(CategoryDaemon, "daemon-live", fmt.Sprintf("a daemon (pid %d) holds %s", st.PID, lockPath))
	case st.Exists && st.PID > 0:
		// A flock dies with its process: the file is only a leftover and the next start takes it over.
		r.ok(CategoryDaemon, "lock-stale", fmt.Sprintf("no daemon running; %s is a harmless leftover of pid %d", lockPath, st.PID))
	default:
		r.ok(CategoryDaemon, "daemon-stopped", "no daemon running")
	}
	if runtime.GOOS == "windows" || strings.HasPrefix(o.Endpoint, `\\.\pipe\`) {
		return live
	}
	checkSocket(r, o.Endpoint, live, st.PID)
	if st, err := install.ProbeLock(o.Endpoint + ".lock"); err == nil && st.Held && !live {
		r.warn(CategoryDaemon, "endpoint-foreign", o.Endpoint,
			fmt.Sprintf("pid %d serves %s but no daemon holds this install's lock: it belongs to another install", st.PID, o.Endpoint),
			"point this install at its own socket (unset ZEROCLAW_SOCKET) or stop the other daemon: zeroclaw stop")
	}
	return live
}

// checkSocket checks that the endpoint is a socket of ours in a private directory, and that a socket without a
// daemon is reported as stale.
func checkSocket(r *report, sock string, live bool, pid int) {
	fi, err := os.Lstat(sock)
	if err != nil {
		if live {
			r.fail(CategoryDaemon, "socket-missing", sock, "a daemon runs but its socket "+sock+" is gone: clients cannot reach it",
				fmt.Sprintf("restart the daemon: kill %d (zeroclaw stop cannot reach it), then zeroclaw daemon", pid))
		}
		return
	}
	if fi.Mode().Type() != fs.ModeSocket {
		r.fail(CategoryDaemon, "socket-not-socket", sock, sock+" is not a socket: the daemon cannot listen there",
			"move "+sock+" away, then start the daemon")
		return
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Geteuid() {
		r.fail(CategoryDaemon, "socket-foreign-owner", sock, fmt.Sprintf("%s belongs to uid %d, not to you (uid %d)", sock, uid, os.Geteuid()),
			"do not talk to a socket another user planted: remove it (as that user or root) and start your daemon")
		return
	}
	dir := filepath.Dir(sock)
	if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o077 != 0 {
		r.warn(CategoryDaemon, "socket-dir-mode", dir, fmt.Sprintf("the socket's directory %s has mode %04o: other users can reach the socket path", dir, di.Mode().Perm()),
			"chmod 700 "+dir)
	}
	if !live {
		r.warn(CategoryDaemon, "socket-stale", sock, "no daemon runs but its socket "+sock+" is still there (the daemon did not exit cleanly)",
			"nothing to do: the next zeroclaw daemon removes it; or rm "+sock)
		return
	}
	r.ok(CategoryDaemon, "socket-ok", "the socket "+sock+" is yours")
}
