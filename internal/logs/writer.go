package logs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Persistence modes ([observability] log_persistence).
const (
	ModeRolling  = "rolling"
	ModeRotating = "rotating"
	ModeFull     = "full"
	ModeNone     = "none"
)

// Persistence is how events are kept on disk.
type Persistence struct {
	Mode        string // ModeRolling (also for ""), ModeRotating, ModeFull or ModeNone
	MaxEntries  int    // rolling: events kept (at least 1)
	MaxBytes    int64  // rotating: rotate once the file reaches this size; 0 means no size limit
	RotateDaily bool   // rotating: rotate at the UTC day boundary
	MaxFiles    int    // rotating: rotated files kept; 0 keeps all
}

func (p Persistence) mode() string {
	if p.Mode == "" {
		return ModeRolling
	}
	return p.Mode
}

func (p Persistence) maxEntries() int { return max(p.MaxEntries, 1) }

// writer appends event lines to the log file (created 0600 in a 0700 directory).
//
// Rolling keeps the newest MaxEntries lines. Upstream cuts the file back to the cap after every write once it is
// over, rewriting all MaxEntries lines per event. Here the file may grow to MaxEntries+slack lines before it is
// cut back to the newest MaxEntries (temp file, fsync, rename), so the rewrite costs O(1) per event amortized;
// readers (Query, Get) skip the lines past the newest MaxEntries, so what the log shows is the same.
type writer struct {
	path  string
	slack func(max int) int

	f     *os.File
	lines int    // non-empty lines in f
	size  int64  // bytes in f
	day   string // UTC day of the file's first event (rotating); "" when empty
	mode  string // the mode f was opened for
}

func (w *writer) write(p Persistence, line []byte, now time.Time) error {
	mode := p.mode()
	if mode == ModeNone {
		return w.close()
	}
	if w.f != nil && w.mode != mode {
		if err := w.close(); err != nil {
			return err
		}
	}
	if w.f == nil {
		if err := w.open(mode); err != nil {
			return err
		}
	}
	today := now.UTC().Format("2006-01-02")
	if mode == ModeRotating && p.RotateDaily && w.day != "" && w.day != today {
		if err := w.rotate(p, now); err != nil {
			return err
		}
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := w.f.Write(buf); err != nil {
		return fmt.Errorf("logs: write %s: %w", w.path, err)
	}
	w.lines++
	w.size += int64(len(buf))
	if w.day == "" {
		w.day = today
	}
	switch mode {
	case ModeRolling:
		if keep := p.maxEntries(); w.lines > keep+max(w.slack(keep), 0) {
			return w.cut(keep)
		}
	case ModeRotating:
		if p.MaxBytes > 0 && w.size >= p.MaxBytes {
			return w.rotate(p, now)
		}
	}
	return nil
}

func (w *writer) open(mode string) error {
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	lines, size, err := countLines(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("logs: read %s: %w", w.path, err)
	}
	if size > 0 {
		if last, ok := lastByte(f, size); ok && last != '\n' { // a torn last line: start on a fresh one
			if _, err := f.Write([]byte{'\n'}); err != nil {
				f.Close()
				return fmt.Errorf("logs: write %s: %w", w.path, err)
			}
			size++
		}
	}
	w.f, w.lines, w.size, w.mode, w.day = f, lines, size, mode, ""
	if st, err := f.Stat(); err == nil && size > 0 {
		w.day = st.ModTime().UTC().Format("2006-01-02")
	}
	return nil
}

func lastByte(f *os.File, size int64) (byte, bool) {
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return 0, false
	}
	return b[0], true
}

func countLines(r io.ReadSeeker) (lines int, size int64, err error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		l, err := br.ReadSlice('\n')
		size += int64(len(l))
		if len(bytes.TrimSpace(l)) > 0 {
			lines++
		}
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull { // a long line: count it once
				l, err = br.ReadSlice('\n')
				size += int64(len(l))
			}
		}
		if err == io.EOF {
			return lines, size, nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
}

// cut rewrites the file with its newest keep lines: temp file (0600, exclusive), fsync, rename, reopen.
func (w *writer) cut(keep int) error {
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("logs: cut %s: %w", w.path, err)
	}
	skip := w.lines - keep
	tmp := fmt.Sprintf("%s.tmp.%d.%d", w.path, os.Getpid(), time.Now().UnixNano())
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("logs: cut %s: %w", w.path, err)
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	sc := bufio.NewScanner(w.f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var written int64
	for sc.Scan() {
		l := sc.Bytes()
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		n, _ := bw.Write(l)
		_ = bw.WriteByte('\n')
		written += int64(n + 1)
	}
	err = sc.Err()
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, w.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("logs: cut %s: %w", w.path, err)
	}
	syncDir(filepath.Dir(w.path))
	w.f.Close()
	w.f = nil
	return w.open(w.mode)
}

// rotate moves the current file aside as <stem>.<UTC time>.jsonl and prunes the oldest rotated files.
func (w *writer) rotate(p Persistence, now time.Time) error {
	if err := w.close(); err != nil {
		return err
	}
	stem := strings.TrimSuffix(w.path, filepath.Ext(w.path))
	name := fmt.Sprintf("%s.%s%s", stem, now.UTC().Format("20060102T150405.000Z"), filepath.Ext(w.path))
	for i := 1; ; i++ {
		if _, err := os.Lstat(name); os.IsNotExist(err) {
			break
		}
		name = fmt.Sprintf("%s.%s-%d%s", stem, now.UTC().Format("20060102T150405.000Z"), i, filepath.Ext(w.path))
	}
	if err := os.Rename(w.path, name); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("logs: rotate %s: %w", w.path, err)
	}
	if p.MaxFiles > 0 {
		old := rotated(w.path)
		for len(old) > p.MaxFiles {
			os.Remove(old[0])
			old = old[1:]
		}
	}
	return w.open(ModeRotating)
}

// RotatedFiles lists the rotated files of the log at path (rotating persistence), oldest first: what a disk
// budget may delete.
func RotatedFiles(path string) []string { return rotated(path) }

// rotated lists the rotated siblings of path, oldest first (their names sort by time).
func rotated(path string) []string {
	stem := filepath.Base(strings.TrimSuffix(path, filepath.Ext(path))) + "."
	ents, _ := os.ReadDir(filepath.Dir(path))
	var out []string
	for _, e := range ents {
		n := e.Name()
		if n != filepath.Base(path) && strings.HasPrefix(n, stem) && strings.HasSuffix(n, filepath.Ext(path)) && !strings.Contains(n, ".tmp.") {
			out = append(out, filepath.Join(filepath.Dir(path), n))
		}
	}
	slices.Sort(out)
	return out
}

func (w *writer) close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err != nil {
		return fmt.Errorf("logs: close %s: %w", w.path, err)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
