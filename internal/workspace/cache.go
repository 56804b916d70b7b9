package workspace

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Cache is Load with the files' contents kept between calls: a file whose Lstat still shows the same file (os.SameFile), size
// and modification time is not read again. A file modified within racyWindow of when it was read is read again
// every time until it is older (git's "racily clean" rule: a write in the same timestamp tick would leave both
// unchanged), so an edit always shows on the next Load. The zero value is ready to use; it is safe for
// concurrent use.
type Cache struct {
	mu sync.Mutex // guards m
	m  map[string]cachedFile
}

// racyWindow is how recent a modification time has to be for the file not to be trusted from the cache; it is
// well above the coarse clock the kernel stamps files with.
const racyWindow = time.Second

// maxCachedFiles bounds the cache; past it the cache starts over.
const maxCachedFiles = 256

type cachedFile struct {
	fi   os.FileInfo
	file File
	ok   bool // the file gave a section (not blank, readable)
}

// Load returns what the package's Load returns for dir. A turn calls it every time, so the common case (every
// file unchanged) costs one Lstat per file and no open: the workspace is opened as an os.Root only when a file
// has to be read, and read through it as Load reads (no symlink followed).
func (c *Cache) Load(dir string) []File {
	now := time.Now()
	out := make([]File, 0, len(PromptFiles))
	var root *os.Root // opened on the first file that has to be read
	defer func() {
		if root != nil {
			root.Close()
		}
	}()
	for _, name := range PromptFiles {
		key := filepath.Join(dir, name) // also the path the file is checked at
		fi, err := os.Lstat(key)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		c.mu.Lock()
		hit, ok := c.m[key]
		c.mu.Unlock()
		if ok && os.SameFile(hit.fi, fi) && hit.fi.Size() == fi.Size() && hit.fi.ModTime().Equal(fi.ModTime()) {
			if hit.ok {
				out = append(out, hit.file)
			}
			continue
		}
		if root == nil {
			if root, err = os.OpenRoot(dir); err != nil {
				return out
			}
		}
		f, got := loadFile(root, name)
		if got {
			out = append(out, f)
		}
		if now.Sub(fi.ModTime()) < racyWindow {
			continue // too fresh to trust: read it again next time
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxCachedFiles {
			c.m = make(map[string]cachedFile)
		}
		c.m[key] = cachedFile{fi: fi, file: f, ok: got}
		c.mu.Unlock()
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
