package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoRoom reports an archive that would expand past the free space of the target's filesystem, or by more
// than Limits.MaxRatio times its own size: nothing is written.
var ErrNoRoom = errors.New("backup: the archive would not fit")

// roomMargin is the free space a restore leaves on the target's filesystem beyond the archive's content.
const roomMargin = 64 << 20

// checkRoom refuses a restore whose manifest declares more bytes than fit beside the target, or more than
// lim.MaxRatio times the archive's size (past lim.RatioFloor bytes, below which ratios say little). It runs on
// the manifest, before any member is read.
func checkRoom(m *Manifest, archiveBytes int64, lim Limits, dir string, free func(string) (int64, error)) error {
	var total int64
	for _, e := range m.Entries {
		total += e.Size
	}
	if lim.MaxRatio > 0 && total > lim.RatioFloor && total/max(archiveBytes, 1) > lim.MaxRatio {
		return fmt.Errorf("%w: its %d bytes expand to %d, more than %d times their size (a decompression bomb?)",
			ErrNoRoom, archiveBytes, total, lim.MaxRatio)
	}
	for { // the nearest existing directory: the target's parent may not exist yet
		if _, err := os.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	avail, err := free(dir)
	if err != nil {
		return fmt.Errorf("backup: free space of %s: %w", dir, err)
	}
	if avail >= 0 && total+roomMargin > avail {
		return fmt.Errorf("%w: it holds %d bytes, %s has %d free (and %d are kept spare)", ErrNoRoom, total, dir, avail, roomMargin)
	}
	return nil
}
