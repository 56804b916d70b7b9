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
)

// target resolves a file_* path for execution under env's policy. Decide has already refused what policy
// forbids; this re-checks the sandbox on the canonical path that will actually be used.
func target(env Env, name, p string) (location, Result, bool) {
	loc, err := locate(env.Workspace, p, env.Policy.ForbiddenPaths)
	if err != nil {
		return location{}, errorf("%s: %v", name, err), false
	}
	if !loc.inside && env.Policy.WorkspaceOnly && env.Policy.Level != LevelFull {
		return location{}, errorf("%s: %v: %s", name, ErrOutsideWorkspace, p), false
	}
	return loc, Result{}, true
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
	f, err := os.Open(loc.path)
	if err != nil {
		return errorf("file_read: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return errorf("file_read: %v", err)
	}
	if fi.IsDir() {
		return errorf("file_read: %s is a directory; use file_list", loc.display())
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
	entries, err := os.ReadDir(loc.path)
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
	if err := atomicWrite(loc.path, []byte(req.content)); err != nil {
		return errorf("file_write: %v", err)
	}
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", len(req.content), loc.display())}
}

// atomicWrite replaces path with data: temp file in the same directory, fsync, rename, fsync the directory.
// Parent directories are created. An existing file's permission bits are kept; new files get 0644.
func atomicWrite(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// The rename is done; a failed directory fsync only weakens durability, as with config saves.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
