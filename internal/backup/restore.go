package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// RestoreOptions say which archive goes where.
type RestoreOptions struct {
	Archive string
	Layout  install.Layout // the target; its data dir must be <root>/data
	// Force restores over a non-empty install, which is moved aside to <root>.before-restore-<timestamp>.
	Force    bool
	Now      time.Time // names the moved-aside install
	Limits   Limits    // zero: DefaultLimits
	Progress Progress  // nil: none
	// FreeSpace reports the bytes that may still be written on dir's filesystem (-1: unknown); nil asks the
	// filesystem. A restore that would not fit (with 64 MiB to spare) is refused before anything is written.
	FreeSpace func(dir string) (int64, error)
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Manifest *Manifest
	// MovedAside is where the previous install went ("" when the target was absent or empty).
	MovedAside string
}

// Restore verifies the whole archive against its manifest, then (only then) extracts it into a private
// staging directory beside the target, fsyncs it, moves a previous install aside (Force) and renames the
// staging directory into place. It refuses while a daemon runs on the target, holding the target's install
// lock during the swap so none starts meanwhile.
func Restore(ctx context.Context, o RestoreOptions) (*RestoreResult, error) {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits
	}
	l := o.Layout
	if filepath.Clean(l.DataDir) != filepath.Join(l.Root, "data") {
		return nil, fmt.Errorf("backup: restore needs the data dir at %s (it is %s): unset ZEROCLAW_DATA_DIR and use --config-dir",
			filepath.Join(l.Root, "data"), l.DataDir)
	}
	if err := refuseLive(l); err != nil {
		return nil, err
	}
	if o.FreeSpace == nil {
		o.FreeSpace = freeSpace
	}
	room := func(m *Manifest, archiveBytes int64) error {
		return checkRoom(m, archiveBytes, o.Limits, filepath.Dir(l.Root), o.FreeSpace)
	}
	m, err := verify(ctx, o.Archive, o.Limits, nil, room, o.Progress)
	if err != nil {
		return nil, err
	}
	empty, err := isEmptyDir(l.Root)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if !empty && !o.Force {
		return nil, fmt.Errorf("%w: %s", ErrNotEmpty, l.Root)
	}
	// Hold the target's lock (if it has a data dir) across the swap: a daemon starting now is refused.
	if fi, err := os.Stat(l.DataDir); err == nil && fi.IsDir() {
		lock, err := install.AcquireLock(l.InstallLockPath())
		if err != nil {
			var le *install.LockedError
			if errors.As(err, &le) {
				return nil, fmt.Errorf("%w (pid %d)", ErrDaemonRunning, le.PID)
			}
			return nil, fmt.Errorf("backup: %w", err)
		}
		defer lock.Release()
	}
	parent := filepath.Dir(l.Root)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(l.Root)+".restore-*")
	if err != nil {
		return nil, fmt.Errorf("backup: staging directory: %w", err)
	}
	staged := false
	defer func() {
		if !staged {
			os.RemoveAll(stage)
		}
	}()
	// The archive is read a second time: every member is checked again as it is written, so an archive changed
	// between the passes is refused too.
	if _, err := verify(ctx, o.Archive, o.Limits, &extractor{root: stage}, nil, o.Progress); err != nil {
		return nil, err
	}
	if err := syncTree(stage); err != nil {
		return nil, err
	}
	res := &RestoreResult{Manifest: m}
	if !empty {
		res.MovedAside = asideName(l.Root, o.Now)
		if err := os.Rename(l.Root, res.MovedAside); err != nil {
			return nil, fmt.Errorf("backup: move the old install aside: %w", err)
		}
	} else if _, err := os.Lstat(l.Root); err == nil {
		if err := os.Remove(l.Root); err != nil { // an empty directory
			return nil, fmt.Errorf("backup: %w", err)
		}
	}
	if err := os.Rename(stage, l.Root); err != nil {
		if res.MovedAside != "" {
			_ = os.Rename(res.MovedAside, l.Root)
		}
		return nil, fmt.Errorf("backup: move the restored install into place: %w", err)
	}
	staged = true
	if err := syncDir(parent); err != nil {
		return nil, err
	}
	return res, nil
}

// refuseLive fails when a daemon holds the target's install lock.
func refuseLive(l install.Layout) error {
	st, err := install.ProbeLock(l.InstallLockPath())
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if st.Held {
		return fmt.Errorf("%w (pid %d) at %s", ErrDaemonRunning, st.PID, l.Root)
	}
	return nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

// asideName is <root>.before-restore-<timestamp>, with a counter when that exists already.
func asideName(root string, now time.Time) string {
	base := root + ".before-restore-" + now.UTC().Format("20060102T150405")
	p := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
		p = fmt.Sprintf("%s-%d", base, i)
	}
}

// countingReader counts the compressed bytes read, for progress.
type countingReader struct {
	r     io.Reader
	n     int64
	total int64
	phase string
	prog  Progress
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.prog != nil && n > 0 {
		c.prog(c.phase, c.n, c.total)
	}
	return n, err
}

// verify reads the archive through: the manifest first, then every member, which must be a regular file the
// manifest lists, of its size and SHA-256, each exactly once. With x set, each member is also written out.
// room, when set, checks the manifest against the room the archive's content needs before any member is read.
func verify(ctx context.Context, archive string, lim Limits, x *extractor, room func(*Manifest, int64) error, prog Progress) (*Manifest, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	phase := "verify"
	if x != nil {
		phase = "restore"
	}
	zr, err := gzip.NewReader(&countingReader{r: f, total: fi.Size(), phase: phase, prog: prog})
	if err != nil {
		return nil, invalid("not a gzip file: %v", err)
	}
	zr.Multistream(false)
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		return nil, invalid("no members: %v", err)
	}
	if h.Name != ManifestName || h.Typeflag != tar.TypeReg {
		return nil, invalid("first member is %q, want %s", h.Name, ManifestName)
	}
	if h.Size > lim.MaxManifest {
		return nil, invalid("manifest of %d bytes, more than %d", h.Size, lim.MaxManifest)
	}
	raw, err := io.ReadAll(io.LimitReader(tr, lim.MaxManifest))
	if err != nil {
		return nil, invalid("manifest: %v", err)
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, invalid("manifest: %v", err)
	}
	if err := m.check(lim); err != nil {
		return nil, err
	}
	if room != nil {
		if err := room(&m, fi.Size()); err != nil {
			return nil, err
		}
	}
	want := make(map[string]Entry, len(m.Entries))
	for _, e := range m.Entries {
		want[e.Path] = e
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalid("%v", err)
		}
		if h.Typeflag != tar.TypeReg {
			return nil, invalid("%q is not a regular file (type %q): links and devices are refused", h.Name, h.Typeflag)
		}
		e, ok := want[h.Name]
		if !ok {
			return nil, invalid("%q is not in the manifest, or appears twice", h.Name)
		}
		delete(want, h.Name)
		if h.Size != e.Size {
			return nil, invalid("%s: %d bytes, the manifest says %d", e.Path, h.Size, e.Size)
		}
		sum := sha256.New()
		var w io.Writer = sum
		var out *os.File
		if x != nil {
			if out, err = x.create(e); err != nil {
				return nil, err
			}
			w = io.MultiWriter(sum, out)
		}
		n, err := io.Copy(w, io.LimitReader(tr, e.Size))
		if out != nil {
			err = errors.Join(err, out.Sync(), out.Close())
		}
		if err != nil {
			return nil, fmt.Errorf("backup: %s: %w", e.Path, err)
		}
		if n != e.Size || hex.EncodeToString(sum.Sum(nil)) != e.SHA256 {
			return nil, invalid("%s: checksum mismatch: the archive is damaged or was altered", e.Path)
		}
	}
	for _, e := range m.Entries { // in manifest order, so the first missing one is named
		if _, missing := want[e.Path]; missing {
			return nil, invalid("%s is in the manifest but not in the archive (%d missing)", e.Path, len(want))
		}
	}
	return &m, nil
}

// extractor writes members below root, which it created empty: directories 0700, files with the owner's
// permission bits only, created exclusively and never through a symlink.
type extractor struct{ root string }

func (x *extractor) create(e Entry) (*os.File, error) {
	p := filepath.Join(x.root, filepath.FromSlash(e.Path))
	if !strings.HasPrefix(p, x.root+string(filepath.Separator)) { // checkPath already ensures it; belt and braces
		return nil, invalid("unsafe path %q", e.Path)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("backup: %s: %w", e.Path, err)
	}
	mode := fs.FileMode(e.Mode) & 0o700
	if mode == 0 {
		mode = 0o600
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, mode|0o200)
	if err != nil {
		return nil, fmt.Errorf("backup: %s: %w", e.Path, err)
	}
	return f, nil
}

// syncTree fsyncs every directory under root (files were synced as they were written), deepest first.
func syncTree(root string) error {
	var dirs []string
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}
