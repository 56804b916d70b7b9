// Package backup writes a consistent archive of a zeroclaw install, while its daemon runs, and restores one.
//
// The archive is a gzipped tar whose first member is MANIFEST.json: every other member's path, size, SHA-256,
// kind and mode, with the zeroclaw version and schema versions that wrote them. SQLite databases are copied with
// VACUUM INTO (one read snapshot each, taken by this process under SQLite's own locking, so a daemon keeps
// writing meanwhile), JSONL files are cut after their last complete line, other files are copied as they are.
// A restore trusts nothing in the archive: it verifies every member against the manifest before it writes
// anything, extracts only regular files under safe relative paths with bounded sizes, and swaps the result into
// place with a rename, keeping the old install aside.
package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// ManifestName is the archive's first member.
const ManifestName = "MANIFEST.json"

// Format and FormatVersion identify the archive layout.
const (
	Format        = "zeroclaw-backup"
	FormatVersion = 1
)

// Kinds of entries.
const (
	KindSQLite = "sqlite" // a VACUUM INTO snapshot
	KindJSONL  = "jsonl"  // cut after the last complete line
	KindFile   = "file"   // copied as it was
)

// Manifest describes an archive.
type Manifest struct {
	Format          string `json:"format"`
	FormatVersion   int    `json:"format_version"`
	ZeroclawVersion string `json:"zeroclaw_version"`
	// ConfigSchemaVersion is config.toml's schema_version (0: no config.toml, or none set: v1).
	ConfigSchemaVersion int     `json:"config_schema_version"`
	CreatedAt           string  `json:"created_at"`
	Entries             []Entry `json:"entries"`
	// Skipped lists what the install held but the archive does not: symlinks, sockets, locks, WAL files.
	Skipped []string `json:"skipped,omitempty"`
}

// Entry is one file of the archive.
type Entry struct {
	Path   string `json:"path"` // slash-separated, relative to the install root
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"`
	Mode   uint32 `json:"mode"` // permission bits
	// SchemaVersion is a database's PRAGMA user_version.
	SchemaVersion int `json:"schema_version,omitempty"`
}

var (
	// ErrInvalidArchive reports an archive that is not a zeroclaw backup or does not match its manifest.
	ErrInvalidArchive = errors.New("backup: invalid archive")
	// ErrDaemonRunning reports a restore onto an install a daemon runs on.
	ErrDaemonRunning = errors.New("backup: a daemon runs on the target install")
	// ErrNotEmpty reports a restore onto a non-empty install without Force.
	ErrNotEmpty = errors.New("backup: the target install is not empty")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArchive, fmt.Sprintf(format, args...))
}

// maxPathLen bounds a member's path.
const maxPathLen = 1024

// checkPath accepts a clean, relative, slash-separated path without "." or ".." elements, backslashes, colons
// or control characters: a path that can only name a file below the restore directory on every platform.
func checkPath(p string) error {
	if p == "" || len(p) > maxPathLen || !fs.ValidPath(p) || p == "." || p == ManifestName {
		return invalid("unsafe path %q", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' || r == ':' {
			return invalid("unsafe path %q", p)
		}
	}
	if strings.HasPrefix(p, "/") {
		return invalid("absolute path %q", p)
	}
	return nil
}

// check validates a decoded manifest: format, version, kinds, unique safe paths, bounded counts and sizes.
func (m *Manifest) check(lim Limits) error {
	if m.Format != Format {
		return invalid("format %q, want %q", m.Format, Format)
	}
	if m.FormatVersion != FormatVersion {
		return invalid("format version %d is not supported by this build (%d)", m.FormatVersion, FormatVersion)
	}
	if len(m.Entries) > lim.MaxEntries {
		return invalid("%d entries, more than %d", len(m.Entries), lim.MaxEntries)
	}
	seen := map[string]bool{}
	var total int64
	for _, e := range m.Entries {
		if err := checkPath(e.Path); err != nil {
			return err
		}
		if seen[e.Path] {
			return invalid("duplicate path %q", e.Path)
		}
		seen[e.Path] = true
		switch e.Kind {
		case KindSQLite, KindJSONL, KindFile:
		default:
			return invalid("%s: unknown kind %q", e.Path, e.Kind)
		}
		if e.Size < 0 || e.Size > lim.MaxEntryBytes {
			return invalid("%s: size %d out of bounds (max %d)", e.Path, e.Size, lim.MaxEntryBytes)
		}
		if total += e.Size; total > lim.MaxTotalBytes {
			return invalid("more than %d bytes in all", lim.MaxTotalBytes)
		}
		if len(e.SHA256) != 64 || strings.Trim(e.SHA256, "0123456789abcdef") != "" {
			return invalid("%s: bad sha256 %q", e.Path, e.SHA256)
		}
	}
	// A file may not also be a directory of another entry.
	for p := range seen {
		for dir := p; strings.Contains(dir, "/"); {
			dir = dir[:strings.LastIndex(dir, "/")]
			if seen[dir] {
				return invalid("%q is both a file and a directory", dir)
			}
		}
	}
	return nil
}

// Limits bound what a restore accepts from an archive.
type Limits struct {
	MaxEntries    int
	MaxEntryBytes int64
	MaxTotalBytes int64
	MaxManifest   int64
	// MaxRatio bounds the archive's expansion: its content may be at most MaxRatio times its own size, once it
	// is past RatioFloor bytes.
	MaxRatio   int64
	RatioFloor int64
}

// DefaultLimits are generous for a personal install and still stop a decompression bomb.
var DefaultLimits = Limits{MaxEntries: 200_000, MaxEntryBytes: 64 << 30, MaxTotalBytes: 256 << 30, MaxManifest: 64 << 20,
	MaxRatio: 200, RatioFloor: 256 << 20}
