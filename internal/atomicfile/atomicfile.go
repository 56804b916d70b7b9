// Package atomicfile writes files that survive a crash: the content goes to a temporary file in the target's
// directory, is fsynced, and only then is published by a rename (replace) or a hard link (no clobber), after
// which the directory is fsynced. A reader sees the old file or the new one, never a torn one.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotDurable wraps the error of the directory sync that follows a successful publish: the new file is in
// place and visible, but a crash may still undo its directory entry. Callers that accept this treat it as
// success (and may log it).
var ErrNotDurable = errors.New("atomicfile: published but the directory sync failed")

// Options change how a file is written. The zero value writes through the operating system.
type Options struct {
	// FS carries every filesystem step; nil means OS{}. Root(r) confines the write to an *os.Root; tests wrap
	// either to inject failures.
	FS FS
	// Backup makes WriteFile copy the file it replaces to <path>.bak (mode 0600, fsynced, even if an older .bak
	// had looser permissions) and make that durable before the rename.
	Backup bool
}

func (o Options) fs() FS {
	if o.FS == nil {
		return OS{}
	}
	return o.FS
}

// WriteFile atomically replaces path with data under permission bits perm (applied to the temporary file
// before any data is written). A symlink at path is replaced, not followed. An error before the rename leaves
// path untouched and no temporary file behind; after the rename only ErrNotDurable can be returned.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Options{}.WriteFile(path, data, perm)
}

// WriteFile is the package function WriteFile with these options.
func (o Options) WriteFile(path string, data []byte, perm fs.FileMode) error {
	fsys := o.fs()
	dir := filepath.Dir(path)
	tmp, err := writeTemp(fsys, path, data, perm)
	if err != nil {
		return err
	}
	fail := func(step string, err error) error {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("atomicfile: %s: %w", step, err)
	}
	if o.Backup {
		if step, err := backup(fsys, path); err != nil {
			return fail(step, err)
		}
		// The backup's directory entry is durable before the file it copies is replaced.
		if err := fsys.SyncDir(dir); err != nil {
			return fail("sync dir before rename", err)
		}
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fail("rename", err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	return nil
}

// backup copies the current content of path, if any, to path+".bak". It returns the failed step's name.
func backup(fsys FS, path string) (string, error) {
	prev, err := fsys.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "read previous", err
	}
	bak, err := fsys.OpenFile(path+".bak", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "create backup", err
	}
	// An older .bak may have been created with looser permissions.
	if err := bak.Chmod(0o600); err != nil {
		_ = bak.Close()
		return "create backup", err
	}
	if err := writeSyncClose(bak, prev); err != nil {
		return "write backup", err
	}
	return "", nil
}

// CreateNoClobber publishes data at path (mode perm) only if nothing is there. If anything already is, a
// dangling symlink included, it returns an error wrapping fs.ErrExist and leaves it alone. The file appears
// whole or not at all; ErrNotDurable after it appeared.
func CreateNoClobber(path string, content []byte, perm fs.FileMode) error {
	return Options{}.CreateNoClobber(path, content, perm)
}

// CreateNoClobber is the package function CreateNoClobber with these options (Backup does not apply).
func (o Options) CreateNoClobber(path string, content []byte, perm fs.FileMode) error {
	fsys := o.fs()
	tmp, err := writeTemp(fsys, path, content, perm)
	if err != nil {
		return err
	}
	return publish(fsys, tmp, path)
}

// CreateNoClobberFunc is CreateNoClobber for content another writer produces by file name (SQLite's VACUUM
// INTO, say): fill receives the name of an empty 0600 temporary file beside path and writes it; the file is
// then fsynced and published without clobbering. It always uses the operating system's filesystem.
func CreateNoClobberFunc(path string, fill func(tmp string) error) error {
	fsys := OS{}
	tmp, f, err := createTemp(fsys, path)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("atomicfile: create temp: %w", err)
	}
	if err := fill(tmp); err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	if err := syncFile(tmp); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("atomicfile: sync temp: %w", err)
	}
	return publish(fsys, tmp, path)
}

// publish hard-links the finished temporary file at path, which fails rather than replace anything there, then
// drops the temporary name and syncs the directory. A temporary name that cannot be removed is left: it is a
// private copy of what was published, and RemoveTemps finds it.
func publish(fsys FS, tmp, path string) error {
	if err := fsys.Link(tmp, path); err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("atomicfile: publish: %w", err)
	}
	_ = fsys.Remove(tmp) // before the directory sync, so the removal is durable too
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	return nil
}

// writeTemp creates a fresh temporary file beside path and fills it: perm, data, fsync, close. On error no
// temporary file is left.
func writeTemp(fsys FS, path string, content []byte, perm fs.FileMode) (string, error) {
	tmp, f, err := createTemp(fsys, path)
	if err != nil {
		return "", err
	}
	err = f.Chmod(perm)
	if err != nil {
		_ = f.Close()
	} else {
		err = writeSyncClose(f, content)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return "", fmt.Errorf("atomicfile: write temp: %w", err)
	}
	return tmp, nil
}

func writeSyncClose(f File, content []byte) error {
	_, err := f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

const tempInfix = ".tmp-"

// createTemp creates .<base>.tmp-<16 hex digits> beside path, exclusively and with mode 0600.
func createTemp(fsys FS, path string) (string, File, error) {
	for range 10 {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+tempInfix+hex.EncodeToString(rnd[:]))
		f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("atomicfile: create temp: %w", err)
		}
		return name, f, nil
	}
	return "", nil, fmt.Errorf("atomicfile: create temp beside %s: %w", path, fs.ErrExist)
}

// RemoveTemps deletes the temporary files writes to path left behind when their process died before
// publishing (kill -9, power loss). The caller must know no write to path is in progress (hold the lock that
// serializes them). It returns the names it removed.
func RemoveTemps(path string) ([]string, error) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("atomicfile: list temp files: %w", err)
	}
	prefix := "." + filepath.Base(path) + tempInfix
	var removed []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		m := filepath.Join(dir, e.Name())
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("atomicfile: remove stale temp file: %w", err)
		}
		removed = append(removed, m)
	}
	return removed, nil
}

func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
