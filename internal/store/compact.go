package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

// ErrBusyWAL is returned by Compact when the database's -wal still holds frames after the checkpoint: another
// process has the file open, and the compacted copy must not be put in place under it.
var ErrBusyWAL = errors.New("store: the database is open in another process (its WAL is not empty after a checkpoint)")

// CompactSuffix names the temporary copy Compact writes beside the database (<db>.compact). One left by a
// compaction that was cut (kill -9) is removed by the next Compact; the database itself is intact either way.
const CompactSuffix = ".compact"

// Compacted is what Compact did to one database.
type Compacted struct {
	Path          string
	Before, After FileStats
}

// Compact rewrites the database at path without its free pages: it checkpoints the WAL into the file
// (TRUNCATE), writes a copy with VACUUM INTO to <path>.compact (created O_EXCL|O_NOFOLLOW, fsynced, checked
// with PRAGMA quick_check), and renames the copy over the database, then fsyncs the directory. A crash at any
// point leaves the old file or the new one, each complete; the rename is the only step that changes the
// database's name, and it happens only once the old file's WAL is empty, so no WAL of the old file is ever
// applied to the new one.
//
// The caller must own the install (hold its lock, so no daemon has the file open); a database this process
// has open is refused (dbfile.ErrLive): a live SQLite file is never renamed under an open connection.
func Compact(ctx context.Context, path string) (Compacted, error) {
	out := Compacted{Path: path}
	if live, _ := dbfile.Live(path); live {
		return out, fmt.Errorf("store: compact %s: %w", path, dbfile.ErrLive)
	}
	if !IsDatabase(path) {
		return out, fmt.Errorf("store: compact %s: not an SQLite database: %w", path, ErrInvalid)
	}
	tmp := path + CompactSuffix
	if err := removeStale(tmp); err != nil {
		return out, fmt.Errorf("store: compact %s: %w", path, err)
	}
	var err error
	if out.Before, err = Stats(ctx, path); err != nil {
		return out, err
	}
	if err := compactInto(ctx, path, tmp); err != nil {
		_ = os.Remove(tmp)
		return out, fmt.Errorf("store: compact %s: %w", path, err)
	}
	// The last connection to the old file is closed: its WAL must be gone or empty before the copy replaces it.
	if fi, err := os.Lstat(path + "-wal"); err == nil && fi.Size() > 0 {
		_ = os.Remove(tmp)
		return out, fmt.Errorf("store: compact %s: %w", path, ErrBusyWAL)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return out, fmt.Errorf("store: compact %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return out, fmt.Errorf("store: compact %s: the copy is in place, the directory sync failed: %w", path, err)
	}
	out.After, err = Stats(ctx, path)
	return out, err
}

// compactInto checkpoints src, writes its VACUUM INTO copy to tmp and checks the copy.
func compactInto(ctx context.Context, src, tmp string) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	c, err := openExisting(ctx, src)
	if err != nil {
		return err
	}
	var busy, logFrames, done int
	err = c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
	if err == nil && busy != 0 {
		err = ErrBusyWAL
	}
	if err == nil {
		_, err = c.ExecContext(ctx, "VACUUM INTO ?", tmp)
	}
	if err = errors.Join(err, c.Close()); err != nil {
		return err
	}
	if err := syncPath(tmp); err != nil {
		return err
	}
	k, err := openExisting(ctx, tmp)
	if err != nil {
		return err
	}
	var res string
	err = k.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res)
	if err = errors.Join(err, k.Close()); err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("the copy fails quick_check: %s", res)
	}
	// Opening the copy to check it may have left a -wal/-shm beside it; neither may outlive the rename.
	for _, s := range []string{"-wal", "-shm"} {
		if err := os.Remove(tmp + s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// removeStale removes a temporary copy a cut compaction left (a regular file; a symlink or directory is not ours
// and is an error), and its -wal/-shm.
func removeStale(tmp string) error {
	for _, p := range []string{tmp + "-wal", tmp + "-shm", tmp} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file: remove it by hand", p)
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
