package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// MaxSetEntries is the largest batch SetMany accepts.
const MaxSetEntries = 256

// SetEntry is one {prop, value} of a set batch; Value is any JSON value but null.
type SetEntry struct {
	Prop  string          `json:"prop"`
	Value json.RawMessage `json:"value"`
}

// Manager owns one config.toml and the live *Config derived from it. The RPC handlers and the CLI both edit
// through it, so a change made with or without a daemon follows the same path: lock, re-read the file, edit
// its text surgically, validate the whole candidate, save atomically, swap.
//
// Lock order: writeMu (the whole read-modify-save) first, liveMu (the swap) second; liveMu is never held
// across I/O.
type Manager struct {
	path string
	// name is how errors of the edits and reloads name the file: its base name, with line numbers. Those
	// errors reach remote clients as the message of an RPC or gateway error, which must not tell them where the
	// install lives; Open's errors, which only reach the local caller, keep the full path.
	name    string
	box     *secrets.Box
	environ []string
	log     *slog.Logger
	fs      atomicfile.FS

	writeMu sync.Mutex // the config write lock

	live atomic.Pointer[snapshot]

	liveMu    sync.Mutex // guards the fields below and serializes swaps
	listeners []func(*Config)
}

type snapshot struct {
	st  *state
	gen uint64
}

// Open loads configPath and returns its Manager. box decrypts and encrypts secret fields (nil: secrets are
// kept as stored and written plain); environ supplies ZEROCLAW_ overrides; log receives warnings (nil: discard).
// Any problem in the file is an error.
func Open(configPath string, box *secrets.Box, environ []string, log *slog.Logger) (*Manager, error) {
	return openWith(configPath, box, environ, log, atomicfile.OS{}, false)
}

// OpenLenient is Open for a daemon's start: entries that fail validation are disabled, each with a warning,
// instead of failing the open (see buildLenient); Disabled lists them. Syntax errors, and a config left with no
// enabled agent, still fail.
func OpenLenient(configPath string, box *secrets.Box, environ []string, log *slog.Logger) (*Manager, error) {
	return openWith(configPath, box, environ, log, atomicfile.OS{}, true)
}

func openWith(configPath string, box *secrets.Box, environ []string, log *slog.Logger, fsys atomicfile.FS, lenient bool) (*Manager, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{path: configPath, name: filepath.Base(configPath), box: box, environ: append([]string(nil), environ...), log: log, fs: fsys}
	st, err := m.read(m.path, lenient)
	if err != nil {
		return nil, err
	}
	m.warn(st)
	m.live.Store(&snapshot{st: st, gen: 1})
	return m, nil
}

// read reads and builds the file; name is how its errors name it (the full path or m.name).
func (m *Manager) read(name string, lenient bool) (*state, error) {
	raw, err := m.readRaw(name)
	if err != nil {
		return nil, err
	}
	if lenient {
		return buildLenient(name, raw, m.environ, m.box)
	}
	return build(name, raw, m.environ, m.box)
}

// readRaw reads the file. A failure names the file as name; when that is not the full path, it is logged
// with it.
func (m *Manager) readRaw(name string) ([]byte, error) {
	raw, err := m.fs.ReadFile(m.path)
	if err != nil {
		if name == m.path {
			return nil, fmt.Errorf("config: read %s: %w", m.path, err)
		}
		m.log.Error("config: read failed", "component", "config", "path", m.path, "err", err)
		return nil, fmt.Errorf("config: read %s: %w", name, pathFree(err))
	}
	return raw, nil
}

// pathFree strips the path an *fs.PathError names, keeping its operation and cause.
func pathFree(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

func (m *Manager) warn(st *state) {
	for _, w := range st.warnings {
		m.log.Warn(w, "component", "config")
	}
}

// Path returns the config file's path.
func (m *Manager) Path() string { return m.path }

// LocalErrors makes the errors of m's edits and reloads name the file by its full path, for a Manager whose
// errors only reach the file's owner on this machine (the CLI editing the file without a daemon). Call it
// before any edit.
func (m *Manager) LocalErrors() { m.name = m.path }

// Current returns the live config: env overrides applied, secrets decrypted. It is an immutable snapshot
// (callers must not modify it) and never blocks.
func (m *Manager) Current() *Config { return m.live.Load().st.cfg }

// Generation counts successful swaps, starting at 1 after Open.
func (m *Manager) Generation() uint64 { return m.live.Load().gen }

// Warnings returns the warnings of the live config's last load (unknown keys, ignored env variables).
func (m *Manager) Warnings() []string { return append([]string(nil), m.live.Load().st.warnings...) }

// Disabled lists the problems whose entries the live config leaves out (OpenLenient, Reload).
func (m *Manager) Disabled() []Problem { return append([]Problem(nil), m.live.Load().st.disabled...) }

// FileSchemaVersion is the schema version of the file behind the live config when it is an older upstream
// schema read through the in-memory migration (1 or 2); 0 when the file is current.
func (m *Manager) FileSchemaVersion() int { return m.live.Load().st.from }

// OnChange registers fn, called with the new config after each successful swap, in swap order. fn runs while
// the config write lock is held: it must be quick and must not call SetMany, Set, Delete or Reload.
func (m *Manager) OnChange(fn func(*Config)) {
	m.liveMu.Lock()
	defer m.liveMu.Unlock()
	m.listeners = append(m.listeners, fn)
}

// swap installs st as the live state; the caller holds writeMu.
func (m *Manager) swap(st *state) uint64 {
	m.liveMu.Lock()
	gen := m.live.Load().gen + 1
	m.live.Store(&snapshot{st: st, gen: gen})
	listeners := slices.Clone(m.listeners)
	m.liveMu.Unlock()
	for _, fn := range listeners {
		fn(st.cfg)
	}
	return gen
}

// Get returns the value at prop (secrets masked) as plain JSON-friendly data; prop "" returns the whole
// config as a map. Unknown props, and map entries that do not exist, are ErrUnknownProp.
func (m *Manager) Get(prop string) (any, error) {
	cfg := m.Current()
	if prop == "" {
		return view(reflect.ValueOf(cfg).Elem(), false), nil
	}
	r, err := normalize(prop)
	if err != nil {
		return nil, err
	}
	v, ok := lookup(cfg, r.path)
	if !ok {
		return nil, fmt.Errorf("%w: %s (no such entry)", ErrUnknownProp, r.path)
	}
	return view(v, r.secret), nil
}

// List returns every leaf whose prop starts with prefix (segment-wise; "" lists all), secrets masked, each
// with its default. An invalid prefix lists nothing.
func (m *Manager) List(prefix string) []Entry {
	var pre Path
	if prefix != "" {
		r, err := normalize(prefix)
		if err != nil {
			return nil
		}
		pre = r.path
	}
	out := []Entry{}
	st := m.live.Load().st
	entries(reflect.ValueOf(st.cfg).Elem(), nil, false, pre, st.envProps, &out)
	return out
}

// normalize parses and resolves a user-written prop.
func normalize(s string) (prop, error) {
	p, err := ParsePath(s)
	if err != nil {
		return prop{}, err
	}
	return resolve(p)
}

// staged is one validated batch entry.
type staged struct {
	r   prop
	val reflect.Value
}

// SetMany applies sets as one change (protocol.md §6.1): entries are normalized, then authorize is called with
// the normalized prop of every entry (same indexes as sets) while the config write lock is held, before
// anything is staged; its error is returned as is. Entries are staged in order on one candidate (later wins),
// the candidate is validated as a whole and saved once, then swapped in. It returns the props in order of
// first appearance. An entry's own failure is an *EntryError with its zero-based index; a validation failure
// caused by an entry is reported against that entry. Any failure leaves the file and the live config unchanged.
func (m *Manager) SetMany(ctx context.Context, sets []SetEntry, authorize func(props []string) error) ([]string, error) {
	switch {
	case len(sets) == 0:
		return nil, ErrNoEntries
	case len(sets) > MaxSetEntries:
		return nil, ErrTooManyEntries
	}
	batch, props, err := prepareSets(sets)
	if err != nil {
		return nil, err
	}

	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	raw, err := m.beginWrite(ctx, "set", authorize, props)
	if err != nil {
		return nil, err
	}
	orig := raw
	if raw, err = m.stageSets(raw, batch, props); err != nil {
		return nil, err
	}
	if err := m.commit(orig, raw, props); err != nil {
		return nil, err
	}
	return firstSeen(props), nil
}

// prepareSets normalizes and type-checks a set batch, before any lock is taken.
func prepareSets(sets []SetEntry) ([]staged, []string, error) {
	batch := make([]staged, len(sets))
	props := make([]string, len(sets))
	for i, e := range sets {
		r, err := normalize(e.Prop)
		if err == nil && !r.leaf {
			err = fmt.Errorf("%w: %s is a table; set its keys", ErrInvalidValue, r.path)
		}
		var val reflect.Value
		if err == nil {
			val, err = decodeValue(r, e.Value)
		}
		if err != nil {
			return nil, nil, &EntryError{Index: i, Prop: e.Prop, Err: err}
		}
		batch[i], props[i] = staged{r: r, val: val}, r.path.String()
	}
	return batch, props, nil
}

// stageSets applies a prepared batch to the file text, in order.
func (m *Manager) stageSets(raw []byte, batch []staged, props []string) ([]byte, error) {
	encrypt := m.encryptWanted(raw)
	var err error
	for i, s := range batch {
		if raw, err = m.stage(raw, s, encrypt); err != nil {
			return nil, &EntryError{Index: i, Prop: props[i], Err: err}
		}
	}
	return raw, nil
}

// firstSeen is props without repeats, in order of first appearance.
func firstSeen(props []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range props {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Set is SetMany with one entry; it returns the canonical path of prop. A failure of the entry is an *EntryError
// worded for one property (no batch index).
func (m *Manager) Set(ctx context.Context, prop string, value json.RawMessage, authorize func([]string) error) (string, error) {
	props, err := m.SetMany(ctx, []SetEntry{{Prop: prop, Value: value}}, authorize)
	if err != nil {
		var ee *EntryError
		if errors.As(err, &ee) {
			ee.Single = true
		}
		return "", err
	}
	return props[0], nil
}

// Delete removes prop's key from the file (the property falls back to its default). deleted is false when
// the file did not set it. Only leaves can be deleted; map entries are not removed by this method.
func (m *Manager) Delete(ctx context.Context, prop string, authorize func([]string) error) (bool, error) {
	r, err := normalize(prop)
	if err != nil {
		return false, err
	}
	if !r.leaf {
		return false, fmt.Errorf("%w: %s is a table; delete its keys", ErrNotEditable, r.path)
	}
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("config: delete: %w", err)
	}
	if authorize != nil {
		if err := authorize([]string{r.path.String()}); err != nil {
			return false, err
		}
	}
	raw, err := m.readRaw(m.name)
	if err != nil {
		return false, err
	}
	if err := refuseOldSchema(m.name, raw); err != nil {
		return false, err
	}
	out, found, err := tomledit.Delete(m.name, raw, r.path)
	if err != nil || !found {
		return false, err
	}
	if entry := mapEntryPrefix(r.path); entry != nil {
		if out, err = tomledit.EnsureTable(m.name, out, entry); err != nil {
			return false, err
		}
	}
	if err := m.commit(raw, out, []string{r.path.String()}); err != nil {
		return false, err
	}
	return true, nil
}

// Hold runs fn with the live config while holding the config write lock, so no set, delete, rename or reload
// swaps the config until fn returns: a decision fn makes from cfg (who may do what) stays the one in force while
// fn acts on it, and a change that arrives meanwhile takes effect after. fn must not edit the config.
func (m *Manager) Hold(ctx context.Context, fn func(cfg *Config) error) error {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("config: hold: %w", err)
	}
	return fn(m.Current())
}

// Reload re-reads the file and swaps it in. It never disables an entry that is running now: the file's
// problems must all be problems the running config already has (the same path and message; their entries
// stay disabled). Otherwise the reload returns a *ValidationError naming the new problems, and the running
// config is kept.
func (m *Manager) Reload(ctx context.Context) (uint64, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("config: reload: %w", err)
	}
	st, err := m.read(m.name, true)
	var ve *ValidationError
	if errors.As(err, &ve) {
		// Nothing usable, or a problem that cannot be disabled: report every problem of the file.
		return 0, err
	}
	if err != nil {
		return 0, err
	}
	running := map[string]bool{}
	for _, p := range m.live.Load().st.disabled {
		running[p.Path+"\x00"+p.Message] = true
	}
	var added []Problem
	for _, p := range st.disabled {
		if !running[p.Path+"\x00"+p.Message] {
			added = append(added, p)
		}
	}
	if len(added) > 0 {
		return 0, &ValidationError{File: m.name, Problems: added}
	}
	m.warn(st)
	return m.swap(st), nil
}

// decodeValue decodes a JSON value and type-checks it against the leaf.
func decodeValue(r prop, raw json.RawMessage) (reflect.Value, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return reflect.Value{}, err
	}
	out := reflect.New(r.typ).Elem()
	if err := coerce(out, v); err != nil {
		return reflect.Value{}, err
	}
	return out, nil
}

// stage applies one entry to the file text: a default value removes the key (keeping its map entry), any
// other value is written in place, encrypted first when it is a secret and encryption is on.
func (m *Manager) stage(raw []byte, s staged, encrypt bool) ([]byte, error) {
	if isDefault(s.r.path, s.val) {
		out, _, err := tomledit.Delete(m.name, raw, s.r.path)
		if err != nil {
			return nil, err
		}
		if entry := mapEntryPrefix(s.r.path); entry != nil {
			return tomledit.EnsureTable(m.name, out, entry)
		}
		return out, nil
	}
	val := s.val
	if s.r.secret && encrypt && m.box != nil {
		var err error
		if val, err = m.encryptValue(s.r.path, val); err != nil {
			return nil, err
		}
	}
	return tomledit.Set(m.name, raw, s.r.path, literal(val))
}

// mapEntryPrefix returns the path of the deepest map entry containing the leaf's parent (nil if none), so
// that removing the leaf's key cannot silently remove the entry.
func mapEntryPrefix(p Path) Path {
	t := configType
	var entry Path
	for i, seg := range p[:len(p)-1] {
		switch t.Kind() {
		case reflect.Struct:
			f, _ := fieldByTag(t, seg)
			t = f.Type
		case reflect.Map:
			t = t.Elem()
			if k := t.Kind(); k == reflect.Struct {
				entry = p[:i+1]
			}
		}
	}
	return entry
}

func (m *Manager) encryptValue(p Path, v reflect.Value) (reflect.Value, error) {
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	err := walkSecrets(out, p, true, func(_ Path, s string) (string, error) {
		enc, err := m.box.Encrypt(s)
		if err != nil {
			return "", fmt.Errorf("config: encrypt %s: %w", p, err)
		}
		return enc, nil
	})
	return out, err
}

// encryptWanted reports the effective [secrets] encrypt setting for raw (true when it cannot be read).
func (m *Manager) encryptWanted(raw []byte) bool {
	d, err := tomledit.Parse(m.name, raw)
	if err != nil {
		return true
	}
	cfg, _, errs := decode(d)
	if len(errs) > 0 {
		return true
	}
	if _, _, err := applyEnv(cfg, m.environ); err != nil {
		return true
	}
	return cfg.Secrets.Encrypt
}

// commit finishes a write: stamp schema_version, encrypt plaintext and legacy secrets, build and validate the
// candidate, save atomically, swap. The caller holds writeMu.
func (m *Manager) commit(orig, raw []byte, props []string) error {
	raw, st, err := m.candidate(raw, props)
	if err != nil {
		return err
	}
	if !bytes.Equal(raw, orig) {
		if err := atomicSave(m.fs, m.log, m.path, raw); err != nil {
			m.log.Error("config: save failed", "component", "config", "err", err)
			return fmt.Errorf("config: save %s: %w", m.name, pathFree(errors.Unwrap(err)))
		}
	}
	m.warn(st)
	m.swap(st)
	return nil
}

// candidate is the file commit would write for raw (schema_version stamped, secrets encrypted) and the state
// it builds, validated; a validation failure caused by one of props names it.
func (m *Manager) candidate(raw []byte, props []string) ([]byte, *state, error) {
	raw, err := tomledit.Set(m.name, raw, Path{"schema_version"}, strconv.Itoa(SchemaVersion))
	if err != nil {
		return nil, nil, err
	}
	if m.box != nil && m.encryptWanted(raw) {
		if raw, err = encryptText(m.name, raw, m.box); err != nil {
			return nil, nil, err
		}
	}
	st, err := build(m.name, raw, m.environ, m.box)
	if err != nil {
		return nil, nil, blame(err, props)
	}
	return raw, st, nil
}

// blame turns a validation failure caused by one of props into an *EntryError naming it.
func blame(err error, props []string) error {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for _, p := range ve.Problems {
		for i, prop := range props {
			if p.Path == prop {
				return &EntryError{Index: i, Prop: prop, Err: err}
			}
		}
	}
	return err
}

// beginWrite is the start every batched write shares, under writeMu (held by the caller): ctx still live,
// authorize allowing props, and the file as it is now, refused when it is of an older schema.
func (m *Manager) beginWrite(ctx context.Context, what string, authorize func([]string) error, props []string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("config: %s: %w", what, err)
	}
	if authorize != nil {
		if err := authorize(props); err != nil {
			return nil, err
		}
	}
	raw, err := m.readRaw(m.name)
	if err != nil {
		return nil, err
	}
	if err := refuseOldSchema(m.name, raw); err != nil {
		return nil, err
	}
	return raw, nil
}
