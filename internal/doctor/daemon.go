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
		r.fail(CategoryDaemon, "lock-unreadable", lockPath, r.t("doctor-lock-unreadable", "error", err), r.t("doctor-lock-unreadable-fix", "path", lockPath))
		return false
	}
	live := st.Held
	switch {
	case st.Held:
		r.ok(CategoryDaemon, "daemon-live", r.t("doctor-daemon-live", "pid", st.PID, "path", lockPath))
	case st.Exists && st.PID > 0:
		// A flock dies with its process: the file is only a leftover and the next start takes it over.
		r.ok(CategoryDaemon, "lock-stale", r.t("doctor-lock-stale", "path", lockPath, "pid", st.PID))
	default:
		r.ok(CategoryDaemon, "daemon-stopped", r.t("doctor-daemon-stopped"))
	}
	if runtime.GOOS == "windows" || strings.HasPrefix(o.Endpoint, `\\.\pipe\`) {
		return live
	}
	checkSocket(r, o.Endpoint, live, st.PID)
	if st, err := install.ProbeLock(o.Endpoint + ".lock"); err == nil && st.Held && !live {
		r.warn(CategoryDaemon, "endpoint-foreign", o.Endpoint,
			r.t("doctor-endpoint-foreign", "pid", st.PID, "path", o.Endpoint), r.t("doctor-endpoint-foreign-fix"))
	}
	return live
}

// checkSocket checks that the endpoint is a socket of ours in a private directory, and that a socket without a
// daemon is reported as stale.
func checkSocket(r *report, sock string, live bool, pid int) {
	fi, err := os.Lstat(sock)
	if err != nil {
		if live {
			r.fail(CategoryDaemon, "socket-missing", sock, r.t("doctor-socket-missing", "path", sock), r.t("doctor-socket-missing-fix", "pid", pid))
		}
		return
	}
	if fi.Mode().Type() != fs.ModeSocket {
		r.fail(CategoryDaemon, "socket-not-socket", sock, r.t("doctor-socket-not-socket", "path", sock), r.t("doctor-socket-not-socket-fix", "path", sock))
		return
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Geteuid() {
		r.fail(CategoryDaemon, "socket-foreign-owner", sock, r.t("doctor-socket-foreign-owner", "path", sock, "uid", uid, "me", os.Geteuid()),
			r.t("doctor-socket-foreign-owner-fix"))
		return
	}
	dir := filepath.Dir(sock)
	if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o077 != 0 {
		r.warn(CategoryDaemon, "socket-dir-mode", dir, r.t("doctor-socket-dir-mode", "path", dir, "mode", fmt.Sprintf("%04o", di.Mode().Perm())),
			"chmod 700 "+dir)
	}
	if !live {
		r.warn(CategoryDaemon, "socket-stale", sock, r.t("doctor-socket-stale", "path", sock), r.t("doctor-socket-stale-fix", "path", sock))
		return
	}
	r.ok(CategoryDaemon, "socket-ok", r.t("doctor-socket-ok", "path", sock))
}
