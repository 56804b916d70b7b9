package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"runtime"
)

// FS is the set of filesystem steps a write takes. Names are as the implementation understands them: OS
// takes ordinary paths, Root paths relative to its root.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	ReadFile(name string) ([]byte, error)
	Rename(oldname, newname string) error
	Link(oldname, newname string) error
	Remove(name string) error
	// SyncDir makes the directory's entries durable; it is a no-op where directories cannot be synced.
	SyncDir(dir string) error
}

// File is the part of an open file a write uses.
type File interface {
	io.Writer
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// OS is the operating system's filesystem.
type OS struct{}

func (OS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}
func (OS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
func (OS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (OS) Link(oldname, newname string) error   { return os.Link(oldname, newname) }
func (OS) Remove(name string) error             { return os.Remove(name) }
func (OS) SyncDir(dir string) error             { return SyncDir(dir) }

// Root returns the filesystem below r: every step resolves its names inside r, so nothing a write does lands
// outside it, whatever symlinks the tree holds.
func Root(r *os.Root) FS { return rootFS{r} }

type rootFS struct{ r *os.Root }

func (f rootFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return f.r.OpenFile(name, flag, perm)
}
func (f rootFS) ReadFile(name string) ([]byte, error) { return f.r.ReadFile(name) }
func (f rootFS) Rename(oldname, newname string) error { return f.r.Rename(oldname, newname) }
func (f rootFS) Link(oldname, newname string) error   { return f.r.Link(oldname, newname) }
func (f rootFS) Remove(name string) error             { return f.r.Remove(name) }
func (f rootFS) SyncDir(dir string) error {
	if !dirSyncable {
		return nil
	}
	d, err := f.r.Open(dir)
	if err != nil {
		return err
	}
	return closeAfter(d, d.Sync())
}

// dirSyncable is false on Windows, which cannot fsync a directory; NTFS journals its metadata itself.
const dirSyncable = runtime.GOOS != "windows"

// SyncDir makes a change to dir's entries (a create, rename, link or remove) durable. It is a no-op where
// directories cannot be synced (Windows).
func SyncDir(dir string) error {
	if !dirSyncable {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return closeAfter(d, d.Sync())
}

func closeAfter(f *os.File, err error) error {
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
