package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// fileSystem is the set of filesystem steps an atomic save takes; tests inject failures into each.
type fileSystem interface {
	OpenFile(name string, flag int, perm os.FileMode) (file, error)
	ReadFile(name string) ([]byte, error)
	Rename(oldpath, newpath string) error
	Link(oldname, newname string) error
	Remove(name string) error
	SyncDir(dir string) error
}

// file is the part of *os.File a save writes through.
type file interface {
	io.Writer
	Sync() error
	Close() error
	Chmod(mode os.FileMode) error
}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	return os.OpenFile(name, flag, perm)
}
func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFS) Link(oldname, newname string) error   { return os.Link(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTemp writes data to a fresh .<base>.tmp-<random> (O_EXCL, 0600) next to path and fsyncs it.
func writeTemp(fsys fileSystem, path string, data []byte) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("config: save %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("config: save %s: create temp: %w", path, err)
	}
	if err := writeSync(f, data); err != nil {
		_ = fsys.Remove(tmp)
		return "", fmt.Errorf("config: save %s: write temp: %w", path, err)
	}
	return tmp, nil
}

func writeSync(f file, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// atomicSave replaces path with data (state.md §2.2): temp file + fsync; previous file copied to <path>.bak +
// fsync; directory fsync; rename; directory fsync. Any failure before the rename returns an error and leaves
// path untouched with no temp file behind. A failed directory fsync after the rename is logged and the save
// still succeeds: success means the new content is visible, not that the rename is durable.
func atomicSave(fsys fileSystem, log *slog.Logger, path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(fsys, path, data)
	if err != nil {
		return err
	}
	fail := func(step string, err error) error {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("config: save %s: %s: %w", path, step, err)
	}
	prev, err := fsys.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fail("read previous", err)
	default:
		bak, err := fsys.OpenFile(path+".bak", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return fail("create backup", err)
		}
		// An older .bak may have been created with looser permissions; it is about to hold secrets.
		if err := bak.Chmod(0o600); err != nil {
			_ = bak.Close()
			return fail("create backup", err)
		}
		if err := writeSync(bak, prev); err != nil {
			return fail("write backup", err)
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fail("sync dir before rename", err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fail("rename", err)
	}
	if err := fsys.SyncDir(dir); err != nil && log != nil {
		log.Warn("config saved but the directory sync after rename failed; the previous file is kept as .bak",
			"component", "config", "path", path, "err", err)
	}
	return nil
}

// createNoClobber publishes data at path only if nothing is there (temp, fsync, hard link, dir fsync).
func createNoClobber(fsys fileSystem, path string, data []byte) (bool, error) {
	tmp, err := writeTemp(fsys, path, data)
	if err != nil {
		return false, err
	}
	defer func() { _ = fsys.Remove(tmp) }()
	if err := fsys.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("config: create %s: %w", path, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return true, fmt.Errorf("config: create %s: sync dir: %w", path, err)
	}
	return true, nil
}

// RemoveStaleTemps deletes the temporary files a save left next to path when its process died between writing
// the temp file and renaming it (kill -9, power loss). Callers must hold the install lock, so that no save is in
// progress. It returns the names it removed.
func RemoveStaleTemps(path string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	if err != nil {
		return nil, fmt.Errorf("config: list temp files: %w", err)
	}
	var removed []string
	for _, m := range matches {
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("config: remove stale temp file: %w", err)
		}
		removed = append(removed, m)
	}
	return removed, nil
}
