package store

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// DirBytes is the space the regular files under dir take (sizes as stat reports them; symlinks are not
// followed, so a link out of the data dir does not count against its budget).
func DirBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // a file removed meanwhile, an unreadable subdirectory: counted as empty
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		return total, fmt.Errorf("store: disk usage of %s: %w", dir, err)
	}
	return total, nil
}
