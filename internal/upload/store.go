package upload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// Dir is the directory, inside an agent's workspace, where files are stored by content.
const Dir = "uploads"

// File is a file to store: its bytes, their SHA-256, and what the client said about it.
type File struct {
	Data     []byte
	Sum      [sha256.Size]byte
	Filename string // as the client gave it; "" means "upload"
	MimeType string // "" means guessed from the filename
}

// Index is the files one session stored, by ref id. Save uses it under the session's files lock.
type Index interface {
	Lookup(ref string) (api.FileAttachment, bool)
	Add(a api.FileAttachment)
}

// dirLocks serializes the writes into one uploads directory of this process (sessions of one agent share it),
// so that a temporary file found there belongs to a write that died with an earlier process.
var dirLocks = struct {
	sync.Mutex
	m     map[string]*dirLock
	swept map[string]bool // directories already rid of an earlier process's temporary files
}{m: map[string]*dirLock{}, swept: map[string]bool{}}

type dirLock struct {
	sync.Mutex
	refs int
}

func lockDir(dir string) func() {
	dirLocks.Lock()
	l := dirLocks.m[dir]
	if l == nil {
		l = &dirLock{}
		dirLocks.m[dir] = l
	}
	l.refs++
	dirLocks.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		dirLocks.Lock()
		if l.refs--; l.refs == 0 {
			delete(dirLocks.m, dir)
		}
		dirLocks.Unlock()
	}
}

// Save stores f in <workspace>/uploads/<sha256 hex><.ext> and indexes it in idx. A file the session already
// indexed is deduplicated, but the disk is checked all the same: if the file there was modified, deleted or
// replaced by a symbolic link (which is never followed), the bytes are written again before Save returns. A
// write goes to a temporary file (fsynced) renamed into place, so a crash leaves the old file or the new one,
// never a partial one. Nothing outside the workspace is touched: every step goes through an os.Root, and the
// uploads directory must be a real directory, not a link.
func Save(workspace string, f File, idx Index) (api.FileAttachment, error) {
	sum := hex.EncodeToString(f.Sum[:])
	name := sum + extension(f.Filename)
	ref := "sha256:" + sum
	dir := filepath.Join(workspace, Dir)
	unlock := lockDir(dir)
	defer unlock()

	root, err := os.OpenRoot(workspace)
	if err != nil {
		return api.FileAttachment{}, fmt.Errorf("upload: open workspace: %w", err)
	}
	defer root.Close()
	ur, err := openUploads(root)
	if err != nil {
		return api.FileAttachment{}, err
	}
	defer ur.Close()
	sweepOnce(dir, ur)

	same, err := onDisk(ur, name, f)
	if err != nil {
		return api.FileAttachment{}, err
	}
	if !same {
		err := atomicfile.Options{FS: hookFS{atomicfile.Root(ur)}}.WriteFile(name, f.Data, 0o600)
		if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
			return api.FileAttachment{}, fmt.Errorf("upload: store %s: %w", name, err)
		}
	}
	path := filepath.Join(dir, name)
	if prior, ok := idx.Lookup(ref); ok && prior.WorkspacePath == path {
		prior.Deduplicated = true
		return prior, nil
	}
	a := api.FileAttachment{RefID: ref, Marker: marker(f, path), WorkspacePath: path, SizeBytes: int64(len(f.Data))}
	idx.Add(a)
	return a, nil
}

// openUploads opens the workspace's uploads directory, creating it (0700) if missing. A symbolic link or
// anything else that is not a directory there is refused.
func openUploads(root *os.Root) (*os.Root, error) {
	st, err := root.Lstat(Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := root.Mkdir(Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("upload: create %s: %w", Dir, err)
		}
		if st, err = root.Lstat(Dir); err != nil {
			return nil, fmt.Errorf("upload: %s: %w", Dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("upload: %s: %w", Dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("upload: %s in the workspace is not a directory (%s)", Dir, st.Mode().Type())
	}
	ur, err := root.OpenRoot(Dir)
	if err != nil {
		return nil, fmt.Errorf("upload: open %s: %w", Dir, err)
	}
	return ur, nil
}

// onDisk reports whether name in ur is a regular file holding exactly f's bytes. A symbolic link is never
// followed: it does not hold them.
func onDisk(ur *os.Root, name string, f File) (bool, error) {
	st, err := ur.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("upload: check %s: %w", name, err)
	}
	if !st.Mode().IsRegular() || st.Size() != int64(len(f.Data)) {
		return false, nil
	}
	fh, err := ur.OpenFile(name, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return false, nil // replaced meanwhile (by a link, say): write it again
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(fh, int64(len(f.Data))+1)); err != nil {
		return false, fmt.Errorf("upload: read %s: %w", name, err)
	}
	return bytes.Equal(h.Sum(nil), f.Sum[:]), nil
}

// staleTemp matches the temporary files atomicfile leaves beside a content-addressed name (Save) or a unique
// one (SaveUnique).
var staleTemp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\.([0-9a-f]{64}(\.[a-z0-9]{1,16})?|[0-9a-f]{12}-[A-Za-z0-9._-]{1,100})\.tmp-[0-9a-f]{16}$`)
})

// sweepOnce removes, the first time this process stores into dir, the temporary files a write left there when
// its process died before the rename. The caller holds dir's lock, so no write of this process is under way,
// and the install lock keeps any other daemon away.
func sweepOnce(dir string, ur *os.Root) {
	dirLocks.Lock()
	done := dirLocks.swept[dir]
	dirLocks.swept[dir] = true
	dirLocks.Unlock()
	if done {
		return
	}
	d, err := ur.Open(".")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if staleTemp().MatchString(n) {
			_ = ur.Remove(n)
		}
	}
}

// extension is the file name extension stored files keep: the filename's, lowercased, when it is 1 to 16
// letters or digits; else none.
func extension(filename string) string {
	ext := strings.ToLower(filepath.Ext(displayName(filename)))
	if len(ext) < 2 || len(ext) > 17 {
		return ""
	}
	for _, r := range ext[1:] {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return ""
		}
	}
	return ext
}

// displayName is the filename as the marker shows it: path separators, NUL and control characters (a newline
// would start a new line in the prompt) become '_'; an empty name is "upload".
func displayName(filename string) string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, filename)
	if strings.TrimSpace(name) == "" {
		return "upload"
	}
	return name
}

// marker is the line the model sees for a stored file: [IMAGE:<path>] for an image, else
// [Document: <name>] <path>, so the agent's file tools can open it.
func marker(f File, path string) string {
	mt := f.MimeType
	if mt == "" {
		mt = mime.TypeByExtension(extension(f.Filename))
	}
	if strings.HasPrefix(strings.ToLower(mt), "image/") {
		return "[IMAGE:" + path + "]"
	}
	return "[Document: " + displayName(f.Filename) + "] " + path
}
