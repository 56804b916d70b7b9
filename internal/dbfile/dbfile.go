// Package dbfile knows which SQLite databases this process has open, and keeps every other way of opening
// their files away from them. POSIX advisory locks belong to the process, not to a descriptor: closing any
// descriptor of a file drops every lock the process holds on it. A header sniff, a hash or a copy of a live
// database would so drop the locks of the process's own SQLite connections without their knowing; the next
// connection of another process to close (an operator's sqlite3, a backup) then believes it is the last one,
// checkpoints and deletes the WAL the connections here still write to, and every later commit is lost at the
// next crash. The stores register their files with Hold; code that opens files by name opens them with Open
// (or checks what it opened with Guard), which refuses a held database, its -wal, -shm and -journal.
package dbfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// ErrLive is returned for a file that belongs to a database this process has open.
var ErrLive = errors.New("dbfile: the file belongs to an SQLite database this process has open: it is read only through SQLite")

// siblings are the files SQLite keeps beside a database.
var siblings = []string{"-wal", "-shm", "-journal"}

// mu guards the fields below.
var (
	mu     sync.Mutex
	held   = map[string]int{} // absolute path of a database file → connections (Hold calls) open on it
	parked []*os.File         // descriptors found live after they were opened: never closed (see Guard)
)

// Hold registers the database at path as open in this process until release is called (once; later calls do
// nothing). Call it before the first SQLite connection to path opens, release after the last one closed.
func Hold(path string) (release func()) {
	p := abs(path)
	mu.Lock()
	held[p]++
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if held[p]--; held[p] <= 0 {
				delete(held, p)
			}
		})
	}
}

// Live reports whether path is (by identity, whatever its spelling or links) a database this process holds or
// one of its -wal, -shm or -journal files; main says it is the database file itself. A path that cannot be
// stat'ed is not live.
func Live(path string) (live, main bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, false
	}
	return liveInfo(fi)
}

func liveInfo(fi fs.FileInfo) (live, main bool) {
	mu.Lock()
	paths := make([]string, 0, len(held))
	for p := range held {
		paths = append(paths, p)
	}
	mu.Unlock()
	for _, p := range paths {
		if same(fi, p) {
			return true, true
		}
		for _, s := range siblings {
			if same(fi, p+s) {
				return true, false
			}
		}
	}
	return false, false
}

func same(fi fs.FileInfo, p string) bool {
	o, err := os.Stat(p)
	return err == nil && os.SameFile(fi, o)
}

// Open opens path read-only unless it belongs to a held database (an error wrapping ErrLive).
func Open(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// OpenFile is os.OpenFile for a file that must not belong to a held database (an error wrapping ErrLive). It
// checks the path before opening and the descriptor after, so a file renamed into place between the two is
// refused too.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if live, _ := Live(path); live {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrLive}
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := Guard(f); err != nil {
		return nil, err
	}
	return f, nil
}

// Guard checks a file already opened: nil when it does not belong to a held database. When it does, f is
// taken over and kept open for the life of the process (closing it would drop the connections' locks) and
// the error wraps ErrLive: the caller must neither use nor close f then.
func Guard(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return nil // nothing to compare: the caller's own use of f reports the problem
	}
	if live, _ := liveInfo(fi); !live {
		return nil
	}
	mu.Lock()
	parked = append(parked, f)
	mu.Unlock()
	return &fs.PathError{Op: "open", Path: f.Name(), Err: ErrLive}
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
