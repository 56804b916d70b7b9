//go:build unix

package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	if got := readPIDFile(t, path); got != h.PID() {
		t.Errorf("pid in file %d, want the holder's %d", got, h.PID())
	}
	h.Stop(t)
}
