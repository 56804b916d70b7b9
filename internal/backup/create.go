package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Progress is told how far an operation is, in bytes of done out of total; phase names the pass. It is called
// from the operation's goroutine and must be quick.
type Progress func(phase string, done, total int64)

// CreateOptions say what to back up and where.
type CreateOptions struct {
	Layout  install.Layout
	Out     string    // the archive to write (replaced atomically)
	Version string    // the zeroclaw version recorded in the manifest
	Now     time.Time // the manifest's created_at and the members' mtime
	// ConfigSchemaVersion is recorded as is (the caller reads config.toml's schema_version).
	ConfigSchemaVersion int
	Progress            Progress // nil: none
}

// source is one file of the install to back up.
type source struct {
	path string // on disk
	rel  string // in the archive
	kind string
	size int64
	mode fs.FileMode
}

// Create writes a consistent archive of the install to o.Out while a daemon may be running: each database is
// copied with VACUUM INTO into a private staging directory beside the archive, JSONL files are cut after their
// last complete line, then the archive (manifest first) is written to a temporary file, fsynced and renamed
// into place. The staging directory is removed whatever happens.
func Create(ctx context.Context, o CreateOptions) (*Manifest, error) {
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(out), ".zeroclaw-backup-*")
	if err != nil {
		return nil, fmt.Errorf("backup: staging directory: %w", err)
	}
	defer os.RemoveAll(stage)

	srcs, skipped, err := collect(o.Layout, out, stage)
	if err != nil {
		return nil, err
	}
	var total, done int64
	for _, s := range srcs {
		total += s.size
	}
	progress := func(phase string, d, t int64) {
		if o.Progress != nil {
			o.Progress(phase, d, t)
		}
	}
	m := &Manifest{Format: Format, FormatVersion: FormatVersion, ZeroclawVersion: o.Version,
		ConfigSchemaVersion: o.ConfigSchemaVersion, CreatedAt: o.Now.UTC().Format(time.RFC3339), Skipped: skipped}
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := stageOne(ctx, s, filepath.Join(stage, filepath.FromSlash(s.rel)))
		if errors.Is(err, fs.ErrNotExist) {
			m.Skipped = append(m.Skipped, s.rel+" (removed while the backup ran)")
			continue
		}
		if err != nil {
			return nil, err
		}
		m.Entries = append(m.Entries, e)
		done += s.size
		progress("snapshot", done, total)
	}
	if err := writeArchive(ctx, out, stage, m, o.Now, progress); err != nil {
		return nil, err
	}
	return m, nil
}

// collect lists the files to back up, sorted by archive path, and what is left out. The data dir is archived as
// data/ even when ZEROCLAW_DATA_DIR puts it elsewhere.
func collect(l install.Layout, out, stage string) ([]source, []string, error) {
	var srcs []source
	var skipped []string
	walk := func(dir, prefix string, skipDir string) error {
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == dir {
					if errors.Is(err, fs.ErrNotExist) {
						return filepath.SkipDir
					}
					return err
				}
				skipped = append(skipped, p+" (unreadable)")
				return nil
			}
			if p == stage || p == skipDir {
				return filepath.SkipDir
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil || rel == "." {
				return nil
			}
			rel = prefix + filepath.ToSlash(rel)
			if d.IsDir() {
				return nil
			}
			name := d.Name()
			switch {
			case p == out || strings.HasPrefix(name, filepath.Base(out)+".tmp-"):
				return nil
			case d.Type()&fs.ModeSymlink != 0:
				skipped = append(skipped, rel+" (symbolic link)")
				return nil
			case d.Type()&fs.ModeSocket != 0:
				return nil // a live endpoint, recreated by the daemon
			case !d.Type().IsRegular():
				skipped = append(skipped, rel+" (not a regular file)")
				return nil
			case name == "daemon.lock" || strings.HasSuffix(name, ".sock.lock"):
				return nil // ownership locks belong to a running process
			case strings.HasSuffix(name, "-wal") || strings.HasSuffix(name, "-shm") || strings.HasSuffix(name, "-journal"):
				if store.IsDatabase(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(p, "-wal"), "-shm"), "-journal")) {
					return nil // part of its database, which is snapshotted whole
				}
			case strings.HasPrefix(name, ".config.toml.tmp-"):
				return nil // a save in progress
			}
			if err := checkPath(rel); err != nil {
				skipped = append(skipped, rel+" (name not portable)")
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			kind := KindFile
			switch {
			case store.IsDatabase(p):
				kind = KindSQLite
			case strings.HasSuffix(name, ".jsonl"):
				kind = KindJSONL
			}
			srcs = append(srcs, source{path: p, rel: rel, kind: kind, size: fi.Size(), mode: fi.Mode().Perm()})
			return nil
		})
	}
	dataInRoot := strings.HasPrefix(l.DataDir, l.Root+string(filepath.Separator))
	skipData := ""
	if !dataInRoot {
		skipData = l.DataDir
	}
	if err := walk(l.Root, "", skipData); err != nil {
		return nil, nil, fmt.Errorf("backup: read %s: %w", l.Root, err)
	}
	if !dataInRoot {
		if err := walk(l.DataDir, "data/", ""); err != nil {
			return nil, nil, fmt.Errorf("backup: read %s: %w", l.DataDir, err)
		}
	}
	if len(srcs) == 0 {
		return nil, nil, fmt.Errorf("backup: nothing to back up in %s", l.Root)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].rel < srcs[j].rel })
	return srcs, skipped, nil
}

// stageOne copies one source into the staging directory the way its kind asks and describes the copy.
func stageOne(ctx context.Context, s source, dst string) (Entry, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return Entry{}, fmt.Errorf("backup: %w", err)
	}
	e := Entry{Path: s.rel, Kind: s.kind, Mode: uint32(s.mode)}
	switch s.kind {
	case KindSQLite:
		v, err := store.Snapshot(ctx, s.path, dst)
		if err != nil {
			return Entry{}, fmt.Errorf("backup: %s: %w", s.rel, err)
		}
		e.SchemaVersion = v
	default:
		if err := copyFile(s.path, dst, s.kind == KindJSONL); err != nil {
			return Entry{}, fmt.Errorf("backup: %s: %w", s.rel, err)
		}
	}
	sum, n, err := store.FileSHA256(dst)
	if err != nil {
		return Entry{}, fmt.Errorf("backup: %s: %w", s.rel, err)
	}
	e.SHA256, e.Size = sum, n
	return e, nil
}

// copyFile copies src as it is when opened (a file replaced by rename meanwhile is read whole from the old
// inode); lines keeps only the bytes up to the last newline, so a line being appended is left out.
func copyFile(src, dst string, lines bool) error {
	in, err := dbfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	n := fi.Size()
	if lines {
		if n, err = lastLineEnd(in, n); err != nil {
			return err
		}
	}
	outF, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(outF, io.LimitReader(in, n)); err != nil {
		outF.Close()
		return err
	}
	return errors.Join(outF.Sync(), outF.Close())
}

// lastLineEnd is the offset just past the last '\n' within the first size bytes of f (0 if none).
func lastLineEnd(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// writeArchive writes manifest and staged files as a gzipped tar to a temporary file beside out, fsyncs it,
// renames it over out and fsyncs the directory.
func writeArchive(ctx context.Context, out, stage string, m *Manifest, now time.Time, progress Progress) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil { // the archive holds the key and the conversations
		return fmt.Errorf("backup: %w", err)
	}
	zw := gzip.NewWriter(tmp)
	tw := tar.NewWriter(zw)
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("backup: manifest: %w", err)
	}
	hdr := func(name string, size int64, mode uint32) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: int64(mode & 0o777), ModTime: now.UTC(), Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(ManifestName, int64(len(mj)), 0o600)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := tw.Write(mj); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	var total, done int64
	for _, e := range m.Entries {
		total += e.Size
	}
	for _, e := range m.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := tw.WriteHeader(hdr(e.Path, e.Size, e.Mode)); err != nil {
			return fmt.Errorf("backup: %s: %w", e.Path, err)
		}
		f, err := os.Open(filepath.Join(stage, filepath.FromSlash(e.Path)))
		if err != nil {
			return fmt.Errorf("backup: %s: %w", e.Path, err)
		}
		// Progress within the file too: one large database would otherwise hold the bar still until it is in.
		_, err = io.Copy(&progressWriter{w: tw, done: &done, total: total, progress: progress}, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("backup: %s: %w", e.Path, err)
		}
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncDir(filepath.Dir(out))
}

// progressWriter passes writes to w, adding each one's bytes to *done and reporting the archive phase.
type progressWriter struct {
	w        io.Writer
	done     *int64
	total    int64
	progress Progress
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	*p.done += int64(n)
	p.progress("archive", *p.done, p.total)
	return n, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("backup: sync %s: %w", dir, err)
	}
	return nil
}
