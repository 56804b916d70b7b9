package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// Prune is one deletion of data the owner marked prunable (auto-saved conversation memories past their cap,
// log files, cost detail past its retention), as the prune log records it.
type Prune struct {
	At     time.Time `json:"at"`
	Store  string    `json:"store"`           // memory, logs, costs
	What   string    `json:"what"`            // what was deleted, in words
	Agent  string    `json:"agent,omitempty"` // the agent whose rows they were
	Rows   int       `json:"rows,omitempty"`
	Bytes  int64     `json:"bytes,omitempty"` // bytes freed on disk, when known
	Reason string    `json:"reason"`          // the setting that asked for it, e.g. "memory.conversation_max_rows = 10000"
}

// MaxPruneRecords is how many records the prune log keeps: past twice as many, it is cut back to the newest.
const MaxPruneRecords = 1000

// PruneLog is the record of every prune: one JSON object a line in data/state/prunes.jsonl, appended and synced
// before the prune is reported done. It is safe for concurrent use within one process.
type PruneLog struct {
	path string

	mu    sync.Mutex // guards lines
	lines int        // records in the file; -1 before the first append counts them
}

// OpenPruneLog returns the log at path; nothing is created before the first record.
func OpenPruneLog(path string) *PruneLog { return &PruneLog{path: path, lines: -1} }

// Path is the log file.
func (l *PruneLog) Path() string { return l.path }

// Append records p (At defaults to now).
func (l *PruneLog) Append(p Prune) error {
	if p.At.IsZero() {
		p.At = time.Now()
	}
	p.At = p.At.UTC()
	line, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("store: prune log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lines < 0 {
		recs, err := ReadPrunes(l.path)
		if err != nil {
			return err
		}
		l.lines = len(recs)
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("store: prune log: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("store: prune log: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: prune log: %w", err)
	}
	l.lines++
	if l.lines > 2*MaxPruneRecords {
		return l.cut()
	}
	return nil
}

// cut rewrites the file with its newest MaxPruneRecords records (atomically: a crash leaves the old or the new).
func (l *PruneLog) cut() error {
	recs, err := ReadPrunes(l.path)
	if err != nil {
		return err
	}
	recs = recs[max(len(recs)-MaxPruneRecords, 0):]
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	if err := atomicfile.WriteFile(l.path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("store: prune log: %w", err)
	}
	l.lines = len(recs)
	return nil
}

// maxPruneLine bounds one record read back (a record is a few hundred bytes; a longer line is not ours).
const maxPruneLine = 64 << 10

// ReadPrunes returns the records of the log at path, oldest first; a missing file has none. Lines that are
// not records (a torn last line after a crash) are skipped.
func ReadPrunes(path string) ([]Prune, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: prune log: %w", err)
	}
	defer f.Close()
	var out []Prune
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), maxPruneLine)
	for sc.Scan() {
		var p Prune
		if json.Unmarshal(sc.Bytes(), &p) == nil && p.Store != "" {
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("store: prune log: %w", err)
	}
	return out, nil
}
