//go:build unix

package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sharedDir is a world-writable sticky directory like /tmp, where another local user can plant files.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := sockDir(t)
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
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
	var ue *UnsafeLockError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafeLock) {
		t.Fatalf("Listen with a symlinked lock: %v, want *UnsafeLockError", err)
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
	if _, err := AcquireLock(endpoint + ".lock"); !errors.Is(err, ErrUnsafeLock) {
		t.Errorf("AcquireLock through a symlink: %v, want ErrUnsafeLock", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("victim changed by AcquireLock: %q", b)
	}
}

// A dangling symlink must not make the daemon create the file it points at.
func TestAcquireLockRefusesDanglingSymlink(t *testing.T) {
	dir := sharedDir(t)
	target := filepath.Join(t.TempDir(), "created-by-us")
	path := filepath.Join(dir, "daemon.lock")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(path); !errors.Is(err, ErrUnsafeLock) {
		t.Fatalf("AcquireLock through a dangling symlink: %v, want ErrUnsafeLock", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink's target was created: %v", err)
	}
}

func TestAcquireLockRefusesNonRegularFiles(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"fifo", "named pipe", func(p string) error { return unix.Mkfifo(p, 0o600) }},
		{"directory", "directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"socket", "socket", func(p string) error {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Bind(fd, &unix.SockaddrUnix{Name: p})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(sockDir(t), "x.lock")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			_, err := AcquireLock(path)
			var ue *UnsafeLockError
			if !errors.As(err, &ue) {
				t.Fatalf("AcquireLock on a %s: %v, want *UnsafeLockError", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q should name %s and say %q", err, path, tc.want)
			}
		})
	}
}

// A second name for one of our files (a hard link planted in a shared dir) must not be truncated.
func TestAcquireLockRefusesHardLinkedFile(t *testing.T) {
	dir := sockDir(t)
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "daemon.lock")
	if err := os.Link(victim, path); err != nil {
		t.Fatal(err)
	}
	_, err := AcquireLock(path)
	if !errors.Is(err, ErrUnsafeLock) || !strings.Contains(err.Error(), "2 hard links") {
		t.Fatalf("AcquireLock on a hard link: %v, want ErrUnsafeLock saying 2 hard links", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("victim changed: %q", b)
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
	var ue *UnsafeLockError
	if !errors.As(err, &ue) {
		t.Fatalf("Listen with a foreign lock file: %v, want *UnsafeLockError", err)
	}
	if errors.Is(err, ErrInUse) || errors.Is(err, ErrLocked) {
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

// A foreign lock file nobody holds is refused all the same: using it would mean trusting its owner.
func TestAcquireLockForeignOwnedUnheld(t *testing.T) {
	if os.Getuid() != 0 {
		// Not a skip: the refusal of a foreign lock is only provable with a file another uid owns. CI runs as root.
		t.Fatal("this test plants a file owned by another uid and needs root: run the suite as root, as .ci/run does")
	}
	path := filepath.Join(sockDir(t), "daemon.lock")
	if err := os.WriteFile(path, []byte("1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := AcquireLock(path)
	if !errors.Is(err, ErrUnsafeLock) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("AcquireLock on a foreign file: %v, want ErrUnsafeLock naming uid 65534", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "1\n" {
		t.Errorf("foreign lock file changed: %q", b)
	}
}

// The pid is written only once the lock is held: a loser never truncates the holder's file.
func TestLoserLeavesHolderPID(t *testing.T) {
	path := filepath.Join(sockDir(t), "daemon.lock")
	h := startHelper(t, "lock", path)
	for range 3 {
		if _, err := AcquireLock(path); !errors.Is(err, ErrLocked) {
			t.Fatalf("AcquireLock while the child holds it: %v", err)
		}
	}
	if got := readPIDFile(t, path); got != h.pid() {
		t.Errorf("pid in file %d, want the holder's %d", got, h.pid())
	}
	h.stop(t)
}
