package jsonl

import (
	"context"
	"errors"
	"fmt"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Import is a JSONL import (ImportDir) prepared to run in the background while the store serves other
// calls: from PrepareImport until Release, every call of the store on a session key the import may create
// or carry metadata over to waits (its ctx still ends it), so nothing a client does can collide with the import
// and no client sees such a session before it is complete. Other sessions are served meanwhile.
type Import struct {
	s       *store.ChatStore
	dir     string
	keys    []string
	release func() // ends the fence (Seam.Fence); a no-op when there was nothing to fence

	// OnSource, when set, is called before each source is imported (with its live name, e.g. "u1.jsonl"). Tests
	// use it to hold an import half way.
	OnSource func(source string)
}

// PrepareImport lists the sources of dir (as ImportDir finds them) and the sessions of the JSONL backend's
// metadata (MetaName, which AdoptMeta carries over), and fences their keys until Release. Run then
// imports them. A missing dir fences nothing.
func PrepareImport(ctx context.Context, s *store.ChatStore, dir string) (*Import, error) {
	if err := s.Seam().Check("import jsonl", dir, false); err != nil {
		return nil, err
	}
	imp := &Import{s: s, dir: dir, release: func() {}}
	cands, _, err := scanJSONL(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return imp, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: import jsonl %s: %w", dir, err)
	}
	for _, c := range cands {
		imp.keys = append(imp.keys, c.key)
	}
	metaKeys, err := jsonlMetaKeys(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("store: import jsonl %s: %w", dir, err)
	}
	imp.keys = append(imp.keys, metaKeys...)
	imp.release = s.Seam().Fence(imp.keys)
	return imp, nil
}

// jsonlMetaKeys returns the keys AdoptMeta would write for the sessions of dir's MetaName, if any.
func jsonlMetaKeys(ctx context.Context, dir string) ([]string, error) {
	p := filepath.Join(dir, MetaName)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	side, err := store.OpenChat(ctx, p)
	if err != nil {
		return nil, err
	}
	defer side.Close()
	rows, err := side.List(ctx, "", 0)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(rows))
	for i, m := range rows {
		keys[i] = strings.TrimSuffix(FileName(m.Key), jsonlExt)
	}
	return keys, nil
}

// Sessions is the number of session keys the import fences.
func (imp *Import) Sessions() int { return len(imp.keys) }

// Run imports the sources of the prepared directory (ImportDir). It does not release the fence: the caller
// does, with Release, once it has also carried the JSONL metadata over (AdoptMeta).
func (imp *Import) Run(ctx context.Context, now time.Time) (ImportReport, error) {
	return importJSONL(ctx, imp.s, imp.dir, now, imp.OnSource)
}

// Release ends the fence: the calls waiting for its sessions go on. Later calls do nothing.
func (imp *Import) Release() {
	imp.release()
}
