package workspace

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Errors of ListDir; the rpc layer maps them to upstream's filesystem codes (session re-exports them).
var (
	// ErrFsNotFound (4001): the directory does not exist or is not a directory.
	ErrFsNotFound = errors.New("fs: not found")
	// ErrFsDenied (4002): the path leaves the workspace (absolute outside it, or through a symbolic link), or
	// cannot be read.
	ErrFsDenied = errors.New("fs: permission denied")
	// ErrFsInvalidPath (4003): the path has a ".." segment.
	ErrFsInvalidPath = errors.New("fs: invalid path")
)

// ListDir lists directory path of workspace ws (upstream's fs/list_dir, confined). path is relative to ws or
// absolute inside it ("" is ws itself). Nothing outside ws is ever opened: ".." is refused, and the directory is
// opened through an os.Root, so a symbolic link leading out is refused too. Entries are not followed: a link is
// listed as itself. Hidden entries (a leading dot) are listed only with showHidden. Errors wrap ErrFsNotFound,
// ErrFsDenied or ErrFsInvalidPath.
func ListDir(ws, path string, showHidden bool) (api.FsListDirResult, error) {
	rel, err := workspaceRel(ws, path)
	if err != nil {
		return api.FsListDirResult{}, err
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return api.FsListDirResult{}, fsError(path, err)
	}
	defer root.Close()
	dir, err := root.Open(rel)
	if err != nil {
		return api.FsListDirResult{}, fsError(path, err)
	}
	defer dir.Close()
	if st, err := dir.Stat(); err != nil || !st.IsDir() {
		return api.FsListDirResult{}, fmt.Errorf("%w: Not a directory: %s", ErrFsNotFound, path)
	}
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return api.FsListDirResult{}, fsError(path, err)
	}
	cwd := filepath.Join(ws, rel)
	out := api.FsListDirResult{Entries: []api.FsEntry{}, Cwd: cwd}
	for _, e := range ents {
		hidden := strings.HasPrefix(e.Name(), ".")
		if hidden && !showHidden {
			continue
		}
		info, err := e.Info() // lstat: a link is reported as itself
		if err != nil {
			continue
		}
		mtime := info.ModTime().Unix()
		out.Entries = append(out.Entries, api.FsEntry{Name: e.Name(), FullPath: filepath.Join(cwd, e.Name()),
			IsDir: info.IsDir(), IsHidden: hidden, Size: info.Size(), Mtime: &mtime})
	}
	slices.SortFunc(out.Entries, func(a, b api.FsEntry) int {
		if a.IsDir != b.IsDir {
			if a.IsDir {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// workspaceRel turns a client path into a path relative to the workspace ws ("." for the workspace itself).
func workspaceRel(ws, path string) (string, error) {
	if path == "" {
		return ".", nil
	}
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if seg == ".." {
			return "", fmt.Errorf("%w: Path traversal not allowed: %s", ErrFsInvalidPath, path)
		}
	}
	if !filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	for _, base := range []string{ws, evalOr(ws)} {
		if rel, err := filepath.Rel(base, filepath.Clean(path)); err == nil && filepath.IsLocal(rel) {
			return rel, nil
		}
	}
	return "", fmt.Errorf("%w: %s is outside the workspace %s", ErrFsDenied, path, ws)
}

// evalOr is ws with its symbolic links resolved (ws itself when that fails), so that an absolute path spelled
// through the real location of the workspace (/private/var/... for /var/... on macOS) is recognized.
func evalOr(ws string) string {
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		return real
	}
	return ws
}

// fsError classifies an error opening or reading path in the workspace root.
func fsError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: Not a directory: %s", ErrFsNotFound, path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: cannot read %s", ErrFsDenied, path)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: a name in %s is too long", ErrFsInvalidPath, path)
	}
	// os.Root refuses a path that escapes it (through a symbolic link) with an error of its own.
	return fmt.Errorf("%w: %s leads outside the workspace", ErrFsDenied, path)
}
