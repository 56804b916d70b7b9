package sop

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// JournalFile is the save journal inside a SOP directory: the new SOP.toml and SOP.md of a save, written
// atomically before either file is replaced, removed once both are. While it exists it is the SOP (the
// loader reads it instead of the two files), so a save cut short by a crash between the two files is
// either not applied at all (no journal yet) or applied whole (the journal), never half.
const JournalFile = ".sop-save.json"

type journal struct {
	TOML string `json:"toml"`
	MD   string `json:"md"`
}

// maxJournalBytes bounds the journal read back: the two files at MaxFileBytes each, JSON-escaped at worst six
// bytes a byte (a control character as \u00XX), plus the keys. A bound on the files alone refused a valid
// save's journal (text full of '<', '>' or '&'), and a crash mid-save then showed half of it.
const maxJournalBytes = 6*2*MaxFileBytes + 1024

// encodeJournal is the journal's bytes as commitSave writes them (no HTML escaping: '<' stays one byte).
func encodeJournal(j journal) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(j) // two strings: cannot fail
	return b.Bytes()
}

// readJournal returns the journal of <name> when there is a whole one.
func readJournal(root *os.Root, name string) (journal, bool) {
	data, ok, err := readBoundedN(root, filepath.Join(name, JournalFile), maxJournalBytes)
	if err != nil || !ok {
		return journal{}, false
	}
	var j journal
	if json.Unmarshal(data, &j) != nil || j.TOML == "" {
		return journal{}, false
	}
	return j, true
}

// commitSave writes the journal, then SOP.md, then SOP.toml, then removes the journal.
func commitSave(root *os.Root, name string, manifest, md []byte) error {
	w := atomicfile.Options{FS: atomicfile.Root(root)}
	j := encodeJournal(journal{TOML: string(manifest), MD: string(md)})
	jp := filepath.Join(name, JournalFile)
	if err := w.WriteFile(jp, j, 0o600); err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return err
	}
	crashPoint(CrashSaveBetweenFiles)
	if err := finishSave(root, name, journal{TOML: string(manifest), MD: string(md)}); err != nil {
		return err
	}
	return nil
}

// finishSave replaces both files from j and drops the journal (also the roll-forward of a cut-short save).
func finishSave(root *os.Root, name string, j journal) error {
	w := atomicfile.Options{FS: atomicfile.Root(root)}
	if err := w.WriteFile(filepath.Join(name, StepsFile), []byte(j.MD), 0o600); err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return err
	}
	if err := w.WriteFile(filepath.Join(name, ManifestFile), []byte(j.TOML), 0o600); err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return err
	}
	if err := root.Remove(filepath.Join(name, JournalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.Root(root).SyncDir(name)
}

// Recover finishes the saves a crash cut short in dir (rolls each journal forward) and removes the staging
// directories of creates that never got published. The daemon calls it at start; a journal is honoured by
// the loader meanwhile, so nothing reads a half-saved SOP either way.
func Recover(dir string) error {
	filesMu.Lock()
	defer filesMu.Unlock()
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer root.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if len(e.Name()) > len(stagingPrefix) && e.Name()[:len(stagingPrefix)] == stagingPrefix {
			errs = append(errs, root.RemoveAll(e.Name()))
			continue
		}
		if j, ok := readJournal(root, e.Name()); ok {
			errs = append(errs, finishSave(root, e.Name(), j))
		}
	}
	return errors.Join(errs...)
}
