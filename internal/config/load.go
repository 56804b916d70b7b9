package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// EnsureDefault writes DefaultTOML to path (0600, atomically, parent directories created 0700) only if path
// does not exist; created reports whether it wrote. Concurrent callers never clobber each other.
func EnsureDefault(path string) (created bool, err error) {
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("config: %w", err)
	}
	return createNoClobber(path, DefaultTOML())
}

// Load reads, decodes and validates the config at path, then applies ZEROCLAW_<a>__<b> overrides from environ
// (in memory only). Secrets stay as stored (use a Manager, or LoadWith, to decrypt them). Warnings list unknown
// keys (kept in the file) and ignored environment variables. Errors are *FileError (syntax, type) or
// *ValidationError (every problem at once), both matching ErrInvalidConfig.
func Load(path string, environ []string) (*Config, []string, error) {
	return LoadWith(path, environ, nil)
}

// LoadWith is Load that also decrypts secret fields with box (nil: leave them as stored).
func LoadWith(path string, environ []string, box *secrets.Box) (*Config, []string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	return LoadBytes(path, raw, environ, box)
}

// LoadBytes is LoadWith on raw file contents; path only names the file in errors.
func LoadBytes(path string, raw []byte, environ []string, box *secrets.Box) (*Config, []string, error) {
	st, err := build(path, raw, environ, box)
	if err != nil {
		return nil, nil, err
	}
	return st.cfg, st.warnings, nil
}

// state is one config file's bytes together with everything derived from them.
type state struct {
	raw      []byte
	cfg      *Config  // live view: env overrides applied, secrets decrypted
	envProps []string // the props a ZEROCLAW_ override sets
	warnings []string
	// from is the file's schema version when it is an upstream v1 or v2 file read through the migration, else 0.
	from int
	// disabled lists the problems whose entries a lenient load left out of cfg (empty for a strict load).
	disabled []Problem
	// docName names what the problems' line numbers refer to (the file, or its in-memory migration).
	docName string
}

// decoded is a file decoded into a Config, before environment overrides, secrets and validation.
type decoded struct {
	doc      *tomledit.Document // the document decoded: the migrated text for an older schema
	cfg      *Config
	warnings []string
	typeErrs []*FileError
	from     int
}

// decodeFile parses raw and decodes it, migrating an upstream schema v1 or v2 file in memory first.
func decodeFile(path string, raw []byte) (*decoded, error) {
	d, err := tomledit.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	var warnings []string
	from := 0
	if v, err := fileVersion(d); err != nil {
		return nil, err
	} else if v < SchemaVersion {
		mig, err := migrateDocument(d, v)
		if err != nil {
			return nil, err
		}
		if d, err = tomledit.Parse(migratedName(path), mig.Text); err != nil {
			return nil, fmt.Errorf("config: %s: the migration to schema v3 produced an unreadable file: %w", path, err)
		}
		from = v
		warnings = append(warnings, fmt.Sprintf("config: %s is schema v%d (an older upstream schema): it was migrated to v3 "+
			"in memory and is left unchanged; writes are refused until `zeroclaw config migrate` rewrites it", path, v))
		for _, w := range mig.Warnings {
			warnings = append(warnings, "config: migration: "+w)
		}
	}
	cfg, decWarn, typeErrs := decode(d)
	decWarn = skillsWarnings(memoryWarnings(decWarn))
	if from > 0 {
		decWarn = summarizeUnknown(decWarn)
	}
	return &decoded{doc: d, cfg: cfg, warnings: append(warnings, decWarn...), typeErrs: typeErrs, from: from}, nil
}

// summarizeUnknown folds the unknown-key warnings of a migrated file (upstream sections this runtime does not
// model: there are many) into one warning naming their top-level keys.
func summarizeUnknown(warnings []string) []string {
	var out, names []string
	seen := map[string]bool{}
	for _, w := range warnings {
		rest, ok := strings.CutPrefix(w, "config: unknown key ")
		if !ok {
			out = append(out, w)
			continue
		}
		key, _, _ := strings.Cut(rest, " at line ")
		if p, err := ParsePath(key); err == nil && len(p) > 0 {
			top := p[0]
			if top == "providers" || top == "agents" || top == "risk_profiles" {
				// Say which entry the ignored key belongs to: those entries are used.
				top = p[:min(len(p), 4)].String()
			}
			if !seen[top] {
				seen[top] = true
				names = append(names, top)
			}
		}
	}
	if len(names) > 0 {
		out = append(out, "config: not used by this runtime (kept in the file): "+strings.Join(names, ", "))
	}
	return out
}

// migratedName names the in-memory migrated text of path in errors: its lines are those `zeroclaw config
// migrate --dry-run` prints.
func migratedName(path string) string {
	return path + " (as migrated to v3, see: zeroclaw config migrate --dry-run)"
}

// build derives a validated state from raw file bytes; any problem is an error.
func build(path string, raw []byte, environ []string, box *secrets.Box) (*state, error) {
	dec, err := decodeFile(path, raw)
	if err != nil {
		return nil, err
	}
	if len(dec.typeErrs) > 0 {
		return nil, dec.typeErrs[0]
	}
	cfg := dec.cfg
	envProps, envWarn, err := applyEnv(cfg, environ)
	if err != nil {
		return nil, err
	}
	warnings := append(dec.warnings, envWarn...)
	if box != nil {
		if err := decryptAll(cfg, box); err != nil {
			return nil, err
		}
	}
	verr, vwarn := validate(cfg, dec.doc, dec.doc.File)
	if verr != nil {
		return nil, verr
	}
	warnings = append(warnings, vwarn...)
	return &state{raw: raw, cfg: cfg, envProps: envProps, warnings: warnings, from: dec.from, docName: dec.doc.File}, nil
}
