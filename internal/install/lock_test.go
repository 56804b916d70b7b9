package install

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file content %q: %v", b, err)
	}
	return pid
}

func TestAcquireLockWritesPIDAndMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	// A previous owner's longer pid must not leave trailing digits behind.
	if err := os.WriteFile(path, []byte("99999999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if got := readPIDFile(t, path); got != os.Getpid() {
		t.Errorf("pid in lock file = %d, want %d", got, os.Getpid())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v, want 0600", fi.Mode().Perm())
	}
	if l.Path() != path {
		t.Errorf("Path() = %q", l.Path())
	}
}

func TestAcquireLockSameProcessConflicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	first, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock belongs to the open file description, so a second open in the same process conflicts.
	_, err = AcquireLock(path)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second AcquireLock: %v, want *LockedError", err)
	}
	if le.PID != os.Getpid() || le.Path != path {
		t.Errorf("LockedError = %+v, want pid %d path %s", le, os.Getpid(), path)
	}
	if !errors.Is(err, ErrLocked) {
		t.Error("errors.Is(err, ErrLocked) is false")
	}
	want := "install: " + path + " is held by another daemon (pid " + strconv.Itoa(os.Getpid()) + ")"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	// The failed attempt must not have disturbed the holder's lock.
	if _, err := AcquireLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("third AcquireLock: %v, want ErrLocked", err)
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("lock file must survive Release: %v", err)
	}
	again, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("AcquireLock after Release: %v", err)
	}
	again.Release()
}

func TestAcquireLockConcurrentOneWinner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	const n = 16
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   []*Lock
		other []error
	)
	for range n {
		wg.Go(func() {
			l, err := AcquireLock(path)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won = append(won, l)
			} else if !errors.Is(err, ErrLocked) {
				other = append(other, err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || len(other) != 0 {
		t.Fatalf("%d winners, unexpected errors %v; want exactly one winner", len(won), other)
	}
	won[0].Release()
}

func TestLockHeldByChildProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	h := startHelper(t, "lock", path)

	_, err := AcquireLock(path)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != h.PID() {
		t.Fatalf("AcquireLock while child holds it: %v, want *LockedError with pid %d", err, h.PID())
	}

	h.Stop(t)
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("AcquireLock after the child released: %v", err)
	}
	l.Release()
}

func TestLockReleasedWhenHolderIsKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	h := startHelper(t, "lock", path)
	h.Kill(t)

	// The dead holder's pid is still in the file, but the kernel dropped its lock.
	if got := readPIDFile(t, path); got != h.PID() {
		t.Fatalf("lock file pid %d, want the killed child's %d", got, h.PID())
	}
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("AcquireLock after kill -9 of the holder: %v", err)
	}
	defer l.Release()
	if got := readPIDFile(t, path); got != os.Getpid() {
		t.Errorf("lock file pid %d after takeover, want ours %d", got, os.Getpid())
	}
}

func TestLockInstall(t *testing.T) {
	base := t.TempDir()
	layout := Layout{Root: base, DataDir: filepath.Join(base, "nested", "data")}
	l, err := LockInstall(layout)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if l.Path() != filepath.Join(layout.DataDir, "daemon.lock") {
		t.Errorf("lock path %q", l.Path())
	}
	fi, err := os.Stat(layout.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, want 0700", fi.Mode().Perm())
	}
	if _, err := LockInstall(layout); !errors.Is(err, ErrLocked) {
		t.Errorf("second LockInstall: %v, want ErrLocked", err)
	}
}
