package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// pendingImports fences the session keys of a JSONL import that has not finished (PrepareImportJSONL): a call
// on such a key waits until the import is released, so a client never writes a session the import is about to
// create (the import never merges over existing rows, state.md §5) nor reads it half carried over.
type pendingImports struct {
	// mu guards the fields below.
	mu     sync.Mutex
	keys   map[string]chan struct{} // a pending key → the done channel of the import that fences it
	closed chan struct{}            // made by OpenChat, closed by ChatStore.Close: waiters give up with ErrClosed

	// waitHook, when set (tests), is called with the key a call starts to wait for.
	waitHook func(key string)
}

// add fences keys until done is closed. A key another import already fences keeps that import's channel.
func (p *pendingImports) add(keys []string, done chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = make(map[string]chan struct{})
	}
	for _, k := range keys {
		if _, ok := p.keys[k]; !ok {
			p.keys[k] = done
		}
	}
}

// remove drops the keys done fences.
func (p *pendingImports) remove(done chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, d := range p.keys {
		if d == done {
			delete(p.keys, k)
		}
	}
}

func (p *pendingImports) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
}

// await returns once none of keys is fenced by a running import, or with ctx's error, or ErrClosed when the
// store closes meanwhile.
func (p *pendingImports) await(ctx context.Context, op string, keys ...string) error {
	for {
		p.mu.Lock()
		var done chan struct{}
		var key string
		for _, k := range keys {
			if d, ok := p.keys[k]; ok {
				done, key = d, k
				break
			}
		}
		closed, hook := p.closed, p.waitHook
		p.mu.Unlock()
		if done == nil {
			return nil
		}
		if hook != nil {
			hook(key)
		}
		select {
		case <-done:
		case <-closed:
			return fmt.Errorf("store: %s %s: %w", op, key, ErrClosed)
		case <-ctx.Done():
			return fmt.Errorf("store: %s %s: waiting for the legacy jsonl import: %w", op, key, ctx.Err())
		}
	}
}

// ready is check, then, for a call naming a session, a wait while a JSONL import still fences that key.
func (s *ChatStore) ready(ctx context.Context, op, key string, needKey bool) error {
	if err := s.check(op, key, needKey); err != nil {
		return err
	}
	return s.imports.await(ctx, op, key)
}

// JSONLImport is a JSONL import (ImportJSONL) prepared to run in the background while the store serves other
// calls: from PrepareImportJSONL until Release, every call of the store on a session key the import may create
// or carry metadata over to waits (its ctx still ends it), so nothing a client does can collide with the import
// and no client sees such a session before it is complete. Other sessions are served meanwhile.
type JSONLImport struct {
	s    *ChatStore
	dir  string
	keys []string
	done chan struct{}
	once sync.Once

	// OnSource, when set, is called before each source is imported (with its live name, e.g. "u1.jsonl"). Tests
	// use it to hold an import half way.
	OnSource func(source string)
}

// PrepareImportJSONL lists the sources of dir (as ImportJSONL finds them) and the sessions of the JSONL backend's
// metadata (JSONLMetaName, which AdoptJSONLMeta carries over), and fences their keys until Release. Run then
// imports them. A missing dir fences nothing.
func (s *ChatStore) PrepareImportJSONL(ctx context.Context, dir string) (*JSONLImport, error) {
	if err := s.check("import jsonl", dir, false); err != nil {
		return nil, err
	}
	imp := &JSONLImport{s: s, dir: dir, done: make(chan struct{})}
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
	s.imports.add(imp.keys, imp.done)
	return imp, nil
}

// jsonlMetaKeys returns the keys AdoptJSONLMeta would write for the sessions of dir's JSONLMetaName, if any.
func jsonlMetaKeys(ctx context.Context, dir string) ([]string, error) {
	p := filepath.Join(dir, JSONLMetaName)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	side, err := OpenChat(ctx, p)
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
		keys[i] = strings.TrimSuffix(JSONLFileName(m.Key), jsonlExt)
	}
	return keys, nil
}

// Sessions is the number of session keys the import fences.
func (imp *JSONLImport) Sessions() int { return len(imp.keys) }

// Run imports the sources of the prepared directory (ImportJSONL). It does not release the fence: the caller
// does, with Release, once it has also carried the JSONL metadata over (AdoptJSONLMeta).
func (imp *JSONLImport) Run(ctx context.Context, now time.Time) (ImportReport, error) {
	return imp.s.importJSONL(ctx, imp.dir, now, imp.OnSource)
}

// Release ends the fence: the calls waiting for its sessions go on. Later calls do nothing.
func (imp *JSONLImport) Release() {
	imp.once.Do(func() {
		imp.s.imports.remove(imp.done)
		close(imp.done)
	})
}
