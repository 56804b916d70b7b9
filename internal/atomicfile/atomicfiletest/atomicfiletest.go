// Package atomicfiletest injects failures into the filesystem steps of atomicfile, for the tests of atomicfile
// and of the packages that write through it.
package atomicfiletest

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// ErrInjected is the error a failing step returns.
var ErrInjected = errors.New("atomicfiletest: injected failure")

// FaultFS is the operating system's filesystem with one named step failing. Steps are named "<op> <kind>",
// op one of open, chmod, write, sync, close, read, remove, and kind "tmp" (atomicfile's temporary file), "bak"
// (a <path>.bak backup) or "target"; "rename" and "link" name themselves; directory syncs are "syncdir 1",
// "syncdir 2", ... in call order. The step is taken after the failure check, except close, which closes the
// file and then fails. Safe for concurrent use.
type FaultFS struct {
	atomicfile.OS
	Fail string // the step that fails ("" : none)

	mu    sync.Mutex // guards the fields below
	steps []string
	temps []string
	syncs int
}

// Steps returns the steps taken so far, in order.
func (f *FaultFS) Steps() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.steps...)
}

// Temps returns the names of the temporary files opened so far.
func (f *FaultFS) Temps() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.temps...)
}

func (f *FaultFS) step(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = append(f.steps, s)
	if s == f.Fail {
		return ErrInjected
	}
	return nil
}

func kindOf(name string) string {
	switch {
	case strings.Contains(filepath.Base(name), ".tmp-"):
		return "tmp"
	case strings.HasSuffix(name, ".bak"):
		return "bak"
	}
	return "target"
}

func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (atomicfile.File, error) {
	k := kindOf(name)
	if err := f.step("open " + k); err != nil {
		return nil, err
	}
	fh, err := f.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if k == "tmp" {
		f.mu.Lock()
		f.temps = append(f.temps, name)
		f.mu.Unlock()
	}
	return &faultFile{File: fh, fs: f, kind: k}, nil
}

func (f *FaultFS) ReadFile(name string) ([]byte, error) {
	if err := f.step("read " + kindOf(name)); err != nil {
		return nil, err
	}
	return f.OS.ReadFile(name)
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if err := f.step("rename"); err != nil {
		return err
	}
	return f.OS.Rename(oldname, newname)
}

func (f *FaultFS) Link(oldname, newname string) error {
	if err := f.step("link"); err != nil {
		return err
	}
	return f.OS.Link(oldname, newname)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.step("remove " + kindOf(name)); err != nil {
		return err
	}
	return f.OS.Remove(name)
}

func (f *FaultFS) SyncDir(dir string) error {
	f.mu.Lock()
	f.syncs++
	n := f.syncs
	f.mu.Unlock()
	if err := f.step("syncdir " + strconv.Itoa(n)); err != nil {
		return err
	}
	return f.OS.SyncDir(dir)
}

type faultFile struct {
	atomicfile.File
	fs   *FaultFS
	kind string
}

func (f *faultFile) Chmod(m fs.FileMode) error {
	if err := f.fs.step("chmod " + f.kind); err != nil {
		return err
	}
	return f.File.Chmod(m)
}

func (f *faultFile) Write(b []byte) (int, error) {
	if err := f.fs.step("write " + f.kind); err != nil {
		return 0, err
	}
	return f.File.Write(b)
}

func (f *faultFile) Sync() error {
	if err := f.fs.step("sync " + f.kind); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Close() error {
	err := f.File.Close()
	if ferr := f.fs.step("close " + f.kind); ferr != nil {
		return ferr
	}
	return err
}
