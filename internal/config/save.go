package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// atomicSave replaces path with data (state.md §2.2): temp file + fsync; previous file copied to <path>.bak +
// fsync; directory fsync; rename; directory fsync (atomicfile with Backup). Any failure before the rename
// returns an error and leaves path untouched with no temp file behind. A failed directory fsync after the
// rename is logged and the save still succeeds: success means the new content is visible, not that the rename
// is durable. The file holds secrets: it is written 0600.
func atomicSave(fsys atomicfile.FS, log *slog.Logger, path string, data []byte) error {
	err := atomicfile.Options{FS: fsys, Backup: true}.WriteFile(path, data, 0o600)
	if errors.Is(err, atomicfile.ErrNotDurable) {
		if log != nil {
			log.Warn("config saved but the directory sync after rename failed; the previous file is kept as .bak",
				"component", "config", "path", path, "err", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("config: save %s: %w", path, err)
	}
	return nil
}

// createNoClobber publishes data at path (0600) only if nothing is there. It reports whether it created the
// file; a failed directory sync after the file appeared is reported as created with an error.
func createNoClobber(path string, data []byte) (bool, error) {
	err := atomicfile.CreateNoClobber(path, data, 0o600)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case errors.Is(err, atomicfile.ErrNotDurable):
		return true, fmt.Errorf("config: create %s: %w", path, err)
	}
	return false, fmt.Errorf("config: create %s: %w", path, err)
}

// RemoveStaleTemps deletes the temporary files a save left next to path when its process died between writing
// the temp file and renaming it (kill -9, power loss). Callers must hold the install lock, so that no save is in
// progress. It returns the names it removed.
func RemoveStaleTemps(path string) ([]string, error) {
	removed, err := atomicfile.RemoveTemps(path)
	if err != nil {
		return removed, fmt.Errorf("config: %w", err)
	}
	return removed, nil
}
