package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
	"github.com/zeroclaw-go/zeroclaw/internal/config/upstream"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// Older schemas (state.md §2.3). A file without schema_version is upstream's schema v1, schema_version = 2 is
// v2. Such a file is migrated to v3 in memory each time it is read and left untouched on disk; writes are
// refused until Migrate rewrites it. schema_version = 3 is stamped only on migrated content.

// ErrOldSchema matches the error of a write refused because config.toml is an older schema.
var ErrOldSchema = errors.New("config: config.toml uses an older schema")

// OldSchemaError refuses a write to a schema v1 or v2 file. It matches ErrOldSchema and ErrNotEditable.
type OldSchemaError struct {
	File    string
	Version int
}

func (e *OldSchemaError) Error() string {
	return fmt.Sprintf("config: %s is schema v%d, read as v3 in memory: it is not written until it is migrated "+
		"(run: zeroclaw config migrate)", e.File, e.Version)
}

// Is makes an *OldSchemaError match ErrOldSchema and ErrNotEditable.
func (e *OldSchemaError) Is(target error) bool {
	return target == ErrOldSchema || target == ErrNotEditable
}

// fileVersion is the schema version of a parsed file: 1 when schema_version is absent (upstream's rule), else
// its value; 0 is taken as 1. A value that is not a non-negative integer is a *FileError; a version above
// SchemaVersion is left for validation to report.
func fileVersion(d *tomledit.Document) (int, error) {
	l, ok := d.Find(Path{"schema_version"})
	if !ok {
		return 1, nil
	}
	n, ok := l.Value.(int64)
	if !ok {
		return 0, &FileError{File: d.File, Line: l.Line, Column: l.Col, Key: "schema_version",
			Msg: "must be an integer, got " + valueKind(l.Value)}
	}
	if n < 0 {
		return 0, &FileError{File: d.File, Line: l.Line, Column: l.Col, Key: "schema_version",
			Msg: fmt.Sprintf("must be a non-negative integer, got %d", n)}
	}
	if n > SchemaVersion {
		return SchemaVersion, nil
	}
	return max(1, int(n)), nil
}

// Migration is an older file rewritten as schema v3.
type Migration struct {
	From     int      // the file's schema version, 1 or 2
	Text     []byte   // the v3 file
	Notes    []string // what moved where
	Warnings []string // what was dropped or cannot be used by this runtime
}

// migrateDocument applies upstream's rules to the parsed file d of schema version from, then maps the
// providers onto this runtime's families, and renders the result keeping d's comments where keys survive.
func migrateDocument(d *tomledit.Document, from int) (*Migration, error) {
	root, err := d.Tree()
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", d.File, err)
	}
	res, err := upstream.Migrate(root, from)
	if err != nil {
		return nil, fmt.Errorf("config: %s: schema v%d cannot be migrated: %w", d.File, from, err)
	}
	return &Migration{From: from, Text: tomledit.Render(d, res.Tree), Notes: res.Notes, Warnings: res.Warnings}, nil
}

// MigrateBytes returns raw (the file at path) rewritten as schema v3, or nil when it already is v3. Secrets
// are left as they are.
func MigrateBytes(path string, raw []byte) (*Migration, error) {
	d, err := tomledit.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	v, err := fileVersion(d)
	if err != nil || v >= SchemaVersion {
		return nil, err
	}
	return migrateDocument(d, v)
}

// MigrateResult tells what Manager.Migrate did.
type MigrateResult struct {
	Migration *Migration // nil when the file already was v3
	Backup    string     // the previous file, kept as <path>.bak
	// Problems are the entries of the migrated file that fail validation; a daemon starting on it disables them.
	Problems []Problem
}

// Migrate rewrites an older (v1 or v2) config file as schema v3 (state.md §2.3): the in-memory migration's
// result, secrets encrypted as any save does, saved atomically with the previous file kept as <path>.bak, then
// swapped in. Problems the migrated config still has do not stop it (the same entries were already disabled in
// memory); they are returned. A file that already is v3 is left alone (nil Migration).
func (m *Manager) Migrate(ctx context.Context) (*MigrateResult, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("config: migrate: %w", err)
	}
	raw, err := m.readRaw(m.name)
	if err != nil {
		return nil, err
	}
	mig, err := MigrateBytes(m.name, raw)
	if err != nil || mig == nil {
		return &MigrateResult{}, err
	}
	text := mig.Text
	if m.box != nil && m.encryptWanted(text) {
		if text, err = encryptText(m.name, text, m.box); err != nil {
			return nil, err
		}
	}
	st, err := buildLenient(m.name, text, m.environ, m.box)
	var ve *ValidationError
	if err != nil && !errors.As(err, &ve) {
		return nil, err
	}
	if err := atomicSave(m.fs, m.log, m.path, text); err != nil {
		if m.name == m.path {
			return nil, err
		}
		m.log.Error("config: save failed", "component", "config", "err", err)
		return nil, fmt.Errorf("config: save %s: %w", m.name, pathFree(errors.Unwrap(err)))
	}
	res := &MigrateResult{Migration: mig, Backup: m.path + ".bak"}
	if ve != nil {
		// Nothing in it can run (a start refuses it, as it refused the old file): it is written all the same,
		// so that the user fixes one file, the one that will be used.
		res.Problems = ve.Problems
		return res, nil
	}
	res.Problems = st.disabled
	m.warn(st)
	if m.live.Load() != nil {
		m.swap(st)
	}
	return res, nil
}

// MigrateFile is Manager.Migrate on the file at path without loading it first, so that a file nothing in which
// can run (which Open and OpenLenient refuse) can be migrated too.
func MigrateFile(ctx context.Context, path string, box *secrets.Box, environ []string, log *slog.Logger) (*MigrateResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{path: path, name: path, box: box, environ: append([]string(nil), environ...), log: log, fs: atomicfile.OS{}}
	return m.Migrate(ctx)
}

// refuseOldSchema returns an *OldSchemaError when raw is a schema v1 or v2 file.
func refuseOldSchema(path string, raw []byte) error {
	d, err := tomledit.Parse(path, raw)
	if err != nil {
		return err
	}
	v, err := fileVersion(d)
	if err != nil {
		return err
	}
	if v < SchemaVersion {
		return &OldSchemaError{File: path, Version: v}
	}
	return nil
}
