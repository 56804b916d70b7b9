package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Files is an agent's workspace (or the install's shared/ directory) as the dashboard's explorer edits it
// (upstream's agents/{alias}/workspace routes): every path is relative to Dir (or absolute inside it) and opened
// through an os.Root, so ".." and a symbolic link leading out are refused as ListDir refuses them; NUL is
// refused. The install is protected as the tools' sandbox protects it: nothing in Data (or Root's data/) is
// reachable, nor anything in Root but what lies in Dir when Dir is a directory strictly below Root outside
// its data (a workspace configured as the install root itself reaches nothing). No change applies to Dir
// itself or to a directory holding Root or Data. Errors wrap ErrFsNotFound, ErrFsDenied or ErrFsInvalidPath.
type Files struct {
	Dir  string
	Root string // the install root ("": nothing protected but Data)
	Data string // the data directory ("": Root's data/)
	// Keep are top-level directories of Dir that Rmdir refuses (ErrFsDenied): the install's own in shared/.
	Keep []string
}

// within reports whether p is dir or below it, in either spelling of dir (as given, symbolic links resolved).
func within(dir, p string) bool {
	if dir == "" {
		return false
	}
	for _, d := range []string{dir, evalOr(dir)} {
		if r, err := filepath.Rel(d, p); err == nil && filepath.IsLocal(r) {
			return true
		}
	}
	return false
}

// protected reports whether the absolute path abs is out of reach.
func (f Files) protected(abs string) bool {
	datas := []string{f.Data}
	if f.Root != "" {
		datas = append(datas, filepath.Join(f.Root, "data"))
	}
	for _, d := range datas {
		if within(d, abs) {
			return true
		}
	}
	if !within(f.Root, abs) {
		return false
	}
	usable := f.Dir != f.Root && within(f.Root, f.Dir) && !within(datas[0], f.Dir) && !within(datas[len(datas)-1], f.Dir)
	return !(usable && within(f.Dir, abs))
}

// holds reports whether abs is a directory that holds the install root or its data (a change to it would
// take them along).
func (f Files) holds(abs string) bool {
	for _, d := range []string{f.Root, f.Data} {
		if d != "" && within(abs, d) {
			return true
		}
	}
	return false
}

// rel is path relative to the workspace, checked against the rules above; whole says the workspace itself is
// allowed (a list of ".").
func (f Files) rel(path string, whole bool) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%w: NUL in path", ErrFsInvalidPath)
	}
	rel, err := workspaceRel(f.Dir, path)
	if err != nil {
		return "", err
	}
	if rel == "." && !whole {
		return "", fmt.Errorf("%w: the workspace itself cannot be changed", ErrFsDenied)
	}
	abs := filepath.Join(f.Dir, rel)
	if f.protected(abs) || !whole && f.holds(abs) {
		return "", fmt.Errorf("%w: %s is the install's own (config, secrets, data)", ErrFsDenied, path)
	}
	return rel, nil
}

// List lists directory path (ListDir, hidden entries included, less the denied directories).
func (f Files) List(path string) ([]FileEntry, string, error) {
	rel, err := f.rel(path, true)
	if err != nil {
		return nil, "", err
	}
	res, err := ListDir(f.Dir, rel, true)
	if err != nil {
		return nil, "", err
	}
	out := []FileEntry{}
	for _, e := range res.Entries {
		if abs := filepath.Join(f.Dir, rel, e.Name); f.protected(abs) || f.holds(abs) {
			continue
		}
		out = append(out, FileEntry{Name: e.Name, Dir: e.IsDir, Size: e.Size, Protected: e.IsDir && rel == "." && slices.Contains(f.Keep, e.Name)})
	}
	return out, filepath.ToSlash(rel), nil
}

// FileEntry is one entry of List.
type FileEntry struct {
	Name      string
	Dir       bool
	Size      int64
	Protected bool // a directory in Keep
}

// Read reads the regular file path, at most limit bytes (more is ErrFsDenied: too large to show).
func (f Files) Read(path string, limit int64) ([]byte, error) {
	rel, err := f.rel(path, false)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(f.Dir)
	if err != nil {
		return nil, fsError(path, err)
	}
	defer root.Close()
	// Stat follows a symbolic link inside the workspace and refuses one that leads out (ErrFsDenied).
	if st, err := root.Stat(rel); err != nil || !st.Mode().IsRegular() {
		if err != nil {
			return nil, fsError(path, err)
		}
		return nil, fmt.Errorf("%w: not a regular file: %s", ErrFsNotFound, path)
	}
	file, err := root.Open(rel)
	if err != nil {
		return nil, fsError(path, err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, fsError(path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrFsDenied, path, limit)
	}
	return data, nil
}

// Remove removes path, a directory with everything in it.
func (f Files) Remove(path string) error {
	rel, err := f.rel(path, false)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(f.Dir)
	if err != nil {
		return fsError(path, err)
	}
	defer root.Close()
	if _, err := root.Lstat(rel); err != nil {
		return fsError(path, err)
	}
	return orFsError(path, root.RemoveAll(rel))
}

// Move renames from to to (to must not exist).
func (f Files) Move(from, to string) error {
	src, err := f.rel(from, false)
	if err != nil {
		return err
	}
	dst, err := f.rel(to, false)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(f.Dir)
	if err != nil {
		return fsError(from, err)
	}
	defer root.Close()
	if _, err := root.Lstat(src); err != nil {
		return fsError(from, err)
	}
	if _, err := root.Lstat(dst); err == nil {
		return fmt.Errorf("%w: %s exists", ErrFsDenied, to)
	}
	return orFsError(to, root.Rename(src, dst))
}

// Mkdir creates directory path and its parents (an existing directory is no error).
func (f Files) Mkdir(path string) error {
	rel, err := f.rel(path, false)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(f.Dir)
	if err != nil {
		return fsError(path, err)
	}
	defer root.Close()
	err = root.MkdirAll(rel, 0o755)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s exists and is no directory", ErrFsDenied, path)
	}
	return orFsError(path, err)
}

// ErrFsNotEmpty is Rmdir's refusal of a directory that still holds something.
var ErrFsNotEmpty = errors.New("fs: directory not empty")

// Rmdir removes the empty directory path. A directory that holds anything is ErrFsNotEmpty (nothing is
// removed), a symbolic link or a file is ErrFsInvalidPath (Rmdir never follows a link, even one that stays
// inside), a missing path ErrFsNotFound.
func (f Files) Rmdir(path string) error {
	rel, err := f.rel(path, false)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(f.Dir)
	if err != nil {
		return fsError(path, err)
	}
	defer root.Close()
	st, err := root.Lstat(rel)
	if err != nil {
		return fsError(path, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: not a directory: %s", ErrFsInvalidPath, path)
	}
	if slices.Contains(f.Keep, filepath.ToSlash(rel)) {
		return fmt.Errorf("%w: %s is kept by the install", ErrFsDenied, path)
	}
	// unlinkat(AT_REMOVEDIR) removes only an empty directory, whatever was put in it since the Lstat.
	err = rmdirAt(root, rel)
	if isNotEmpty(err) {
		return fmt.Errorf("%w: %s holds files or directories; remove them first", ErrFsNotEmpty, path)
	}
	return orFsError(path, err)
}

// orFsError is fsError for a failure, nil for none.
func orFsError(path string, err error) error {
	if err == nil {
		return nil
	}
	return fsError(path, err)
}
