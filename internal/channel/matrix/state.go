package matrix

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// maxStateBytes bounds the state file read back.
const maxStateBytes = 64 << 10

// state is what the adapter keeps in its data directory: the sync token (written only after its batch was
// recorded) and the device a password login was given (reused, so the homeserver's transaction ids, scoped to
// the device, dedupe across restarts). Never the access token.
type state struct {
	NextBatch string `json:"next_batch,omitempty"`
	DeviceID  string `json:"device_id,omitempty"`
}

// stateFile is <dir>/sync.json, written atomically (a crash leaves the old token or the new one); dir "" keeps
// the state in memory.
type stateFile struct {
	dir string
	mu  *sync.Mutex
	mem *state
}

func newStateFile(dir string) stateFile { return stateFile{dir: dir, mu: &sync.Mutex{}, mem: &state{}} }

func (f *stateFile) path() string { return filepath.Join(f.dir, "sync.json") }

// load reads the state; a missing file is the empty state, and so (with a warning) is an unreadable one: the
// next sync is then a first sync, which answers no history, and redelivered events are recognised by the core.
func (f *stateFile) load(log *slog.Logger) state {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dir == "" {
		return *f.mem
	}
	fh, err := os.OpenFile(f.path(), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("matrix state unreadable; starting with a first sync", "error", err)
		}
		return state{}
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, maxStateBytes+1))
	var st state
	if err != nil || len(raw) > maxStateBytes || json.Unmarshal(raw, &st) != nil {
		log.Warn("matrix state file is not valid; starting with a first sync", "path", f.path())
		return state{}
	}
	return st
}

func (f *stateFile) save(st state) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dir == "" {
		*f.mem = st
		return nil
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	raw, _ := json.Marshal(st)
	err := atomicfile.WriteFile(f.path(), raw, 0o600)
	if errors.Is(err, atomicfile.ErrNotDurable) {
		return nil // in place; a crash may undo it, and then the batch is delivered again (and recognised)
	}
	return err
}
