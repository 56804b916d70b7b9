//go:build unix

package localsock

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// The endpoint lock's safety rules (install.AcquireLock) as Listen meets them.

// sharedDir is a world-writable sticky directory like /tmp, where another local user can plant files.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := sockDir(t)
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lookupUser is uid's login name, or "" when it cannot be resolved.
func lookupUser(uid int) string {
	u, err := user.LookupId(fmt.Sprint(uid))
	if err != nil {
		return ""
	}
	return u.Username
}

// A symlink planted at <socket>.lock must not make the daemon write through it.
func TestListenRefusesSymlinkedLock(t *testing.T) {
	dir := sharedDir(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	endpoint := filepath.Join(dir, "zc.sock")
	if err := os.Symlink(victim, endpoint+".lock"); err != nil {
		t.Fatal(err)
	}

	_, err := Listen(endpoint)
	var ue *install.UnsafeLockError
	if !errors.As(err, &ue) || !errors.Is(err, install.ErrUnsafeLock) {
		t.Fatalf("Listen with a symlinked lock: %v, want *install.UnsafeLockError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, endpoint+".lock") || !strings.Contains(msg, "symbolic link") {
		t.Errorf("error %q should name the lock path and say it is a symbolic link", msg)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Errorf("victim changed: %q, %v", b, err)
	}
	if fi, err := os.Lstat(endpoint + ".lock"); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("the planted symlink should be left as it is: %v, %v", fi, err)
	}
	if _, err := os.Lstat(endpoint); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nothing should be bound at the endpoint: %v", err)
	}

	// The install lock follows the same rule.
	if _, err := install.AcquireLock(endpoint + ".lock"); !errors.Is(err, install.ErrUnsafeLock) {
		t.Errorf("AcquireLock through a symlink: %v, want install.ErrUnsafeLock", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("victim changed by AcquireLock: %q", b)
	}
}

// plantForeignLock creates path owned by uid 65534 with a pid-looking content, as another user's process
// would, and holds a flock on it for the rest of the test.
func plantForeignLock(t *testing.T, path string) {
	t.Helper()
	if os.Getuid() != 0 {
		// Not a skip: the refusal of a foreign lock is only provable with a file another uid owns. CI runs as root.
		t.Fatal("this test plants a file owned by another uid and needs root: run the suite as root, as .ci/run does")
	}
	if err := os.WriteFile(path, []byte("1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// A lock file planted and held by another uid: the pid in it is not ours to believe; name the owner instead.
func TestListenForeignOwnedLockNamesOwner(t *testing.T) {
	dir := sharedDir(t)
	endpoint := filepath.Join(dir, "zc.sock")
	plantForeignLock(t, endpoint+".lock")

	_, err := Listen(endpoint)
	var ue *install.UnsafeLockError
	if !errors.As(err, &ue) {
		t.Fatalf("Listen with a foreign lock file: %v, want *install.UnsafeLockError", err)
	}
	if errors.Is(err, ErrInUse) || errors.Is(err, install.ErrLocked) {
		t.Errorf("a foreign lock file is not proof of a daemon of ours: %v", err)
	}
	if ue.UID != 65534 {
		t.Errorf("UnsafeLockError.UID = %d, want 65534", ue.UID)
	}
	msg := err.Error()
	if !strings.Contains(msg, "uid 65534") || !strings.Contains(msg, endpoint+".lock") {
		t.Errorf("error %q should name the owner uid 65534 and the path", msg)
	}
	if strings.Contains(msg, "pid") {
		t.Errorf("error %q names a pid read from a file we do not own", msg)
	}
	if name := lookupUser(65534); name != "" && !strings.Contains(msg, "("+name+")") {
		t.Errorf("error %q should name the owner %q", msg, name)
	}
	b, _ := os.ReadFile(endpoint + ".lock")
	if string(b) != "1\n" {
		t.Errorf("foreign lock file changed: %q", b)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(endpoint+".lock", &st); err != nil || st.Uid != 65534 {
		t.Errorf("foreign lock file owner %d, %v", st.Uid, err)
	}
}
