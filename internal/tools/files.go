package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

// target resolves a file_* path for execution under env's policy. Decide has already refused what policy
// forbids; this re-checks the sandbox on the canonical path that will actually be used.
func target(env Env, name, p string) (location, Result, bool) {
	loc, err := locate(env.Workspace, p, env.Policy.ForbiddenPaths, env.Policy.Protected)
	if err != nil {
		return location{}, errorf("%s: %v", name, err), false
	}
	if !loc.inside && env.Policy.WorkspaceOnly && env.Policy.Level != LevelFull {
		return location{}, errorf("%s: %v: %s", name, ErrOutsideWorkspace, p), false
	}
	if testHookResolved != nil {
		testHookResolved()
	}
	return loc, Result{}, true
}

// testHookResolved, when set by a test, runs between the sandbox check and the file operation.
var testHookResolved func()

// root opens the directory that confines operations on l and returns it with l's path relative to it: the
// workspace for a path inside it, so a symlink swapped in after the check cannot lead the operation out
// (os.Root resolves every component without escaping); the filesystem root for an allowed outside path.
func (l location) root() (*os.Root, string, error) {
	base := l.workspace
	if !l.inside {
		base = filepath.VolumeName(l.path) + string(filepath.Separator)
	}
	rel, err := filepath.Rel(base, l.path)
	if err != nil {
		return nil, "", err
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, "", err
	}
	return r, rel, nil
}

// confirm checks that f, opened for the canonical path want, is the file the sandbox checked: where the
// platform reports the path of an open file (Linux), it must be want, so a symlink or a rename swapped in
// between the check and the open is refused; and f must not be one of the install root's secret files reached
// through a hard link.
func confirm(env Env, want string, f *os.File) error {
	if got, ok := openedPath(f); ok && got != want {
		if env.Policy.Protected.covers(got) {
			return fmt.Errorf("%w: %s", ErrProtectedPath, want)
		}
		return fmt.Errorf("%s changed while it was opened (now %s); not used", want, got)
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return nil
	}
	for _, root := range env.Policy.Protected.Roots {
		for _, name := range []string{"config.toml", "config.toml.bak", ".secret_key"} {
			if si, err := os.Stat(filepath.Join(root, name)); err == nil && os.SameFile(fi, si) {
				return fmt.Errorf("%w: %s is a link to %s", ErrProtectedPath, want, name)
			}
		}
	}
	return nil
}

// display names a canonical path for the model: relative to the workspace when inside it.
func (l location) display() string {
	if l.inside {
		if rel, err := filepath.Rel(l.workspace, l.path); err == nil {
			return rel
		}
	}
	return l.path
}

func readFile(env Env, call Call) Result {
	p, err := pathArg(call)
	if err != nil {
		return errorf("%v", err)
	}
	loc, res, ok := target(env, NameFileRead, p)
	if !ok {
		return res
	}
	root, rel, err := loc.root()
	if err != nil {
		return errorf("file_read: %v", err)
	}
	defer root.Close()
	if live, _ := dbfile.Live(loc.path); live {
		return errorf("file_read: %s is a database the daemon has open; it is not read as a file", loc.display())
	}
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return errorf("file_read: %v", err)
	}
	if err := dbfile.Guard(f); err != nil { // f is the dbfile package's now: closing it would drop the daemon's locks
		return errorf("file_read: %s is a database the daemon has open; it is not read as a file", loc.display())
	}
	defer f.Close()
	if err := confirm(env, loc.path, f); err != nil {
		return errorf("file_read: %v", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return errorf("file_read: %v", err)
	}
	if fi.IsDir() {
		return errorf("file_read: %s is a directory; use file_list", loc.display())
	}
	if !fi.Mode().IsRegular() {
		return errorf("file_read: %s is not a regular file", loc.display())
	}
	limit := env.outputCap()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return errorf("file_read: %v", err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return errorf("file_read: %s looks like a binary file (%d bytes); not shown", loc.display(), fi.Size())
	}
	if len(data) > limit {
		return Result{Output: fmt.Sprintf("%s\n[truncated: showing the first %d of %d bytes]", data[:limit], limit, fi.Size())}
	}
	return Result{Output: string(data)}
}

func listDir(env Env, call Call) Result {
	p, err := pathArg(call)
	if err != nil {
		return errorf("%v", err)
	}
	loc, res, ok := target(env, NameFileList, p)
	if !ok {
		return res
	}
	root, rel, err := loc.root()
	if err != nil {
		return errorf("file_list: %v", err)
	}
	defer root.Close()
	dir, err := root.Open(rel)
	if err != nil {
		return errorf("file_list: %v", err)
	}
	defer dir.Close()
	if err := confirm(env, loc.path, dir); err != nil {
		return errorf("file_list: %v", err)
	}
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return errorf("file_list: %v", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return Result{Output: "(empty directory)"}
	}
	var b strings.Builder
	limit := env.outputCap()
	for i, n := range names {
		if b.Len()+len(n)+1 > limit {
			fmt.Fprintf(&b, "[truncated: %d more entries]", len(names)-i)
			break
		}
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}
}

func writeFile(env Env, call Call) Result {
	req, err := parseWrite(call)
	if err != nil {
		return errorf("%v", err)
	}
	loc, res, ok := target(env, NameFileWrite, req.path)
	if !ok {
		return res
	}
	if live, _ := dbfile.Live(loc.path); live {
		return errorf("file_write: %s is a database the daemon has open; it is not replaced as a file", loc.display())
	}
	root, rel, err := loc.root()
	if err != nil {
		return errorf("file_write: %v", err)
	}
	defer root.Close()
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return errorf("file_write: %v", err)
	}
	// The write happens in the parent directory opened here, confirmed to be the one checked.
	parent, err := root.OpenRoot(filepath.Dir(rel))
	if err != nil {
		return errorf("file_write: %v", err)
	}
	defer parent.Close()
	if err := confirmDir(env, filepath.Dir(loc.path), parent); err != nil {
		return errorf("file_write: %v", err)
	}
	if err := atomicWrite(parent, filepath.Base(rel), []byte(req.content)); err != nil {
		return errorf("file_write: %v", err)
	}
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", len(req.content), loc.display())}
}

// confirmDir confirms (see confirm) that root is the directory want.
func confirmDir(env Env, want string, root *os.Root) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return confirm(env, want, d)
}

// atomicWrite replaces name (relative to root) with data (atomicfile through root: temp file in the same
// directory, fsync, rename, fsync the directory). Parent directories are created. An existing file's permission
// bits are kept; new files get 0644. Every step goes through root, so nothing lands outside it.
func atomicWrite(root *os.Root, name string, data []byte) error {
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := root.Stat(name); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", name)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	err := atomicfile.Options{FS: atomicfile.Root(root)}.WriteFile(name, data, mode)
	if errors.Is(err, atomicfile.ErrNotDurable) {
		// The rename is done; a failed directory fsync only weakens durability, as with config saves.
		return nil
	}
	return err
}
