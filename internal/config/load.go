package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	doc      *document
	cfg      *Config // live view: env overrides applied, secrets decrypted
	envProps []string
	warnings []string
}

// build derives a validated state from raw file bytes.
func build(path string, raw []byte, environ []string, box *secrets.Box) (*state, error) {
	d, err := parseDocument(path, raw)
	if err != nil {
		return nil, err
	}
	cfg, warnings, err := decode(d)
	if err != nil {
		return nil, err
	}
	envProps, envWarn, err := applyEnv(cfg, environ)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, envWarn...)
	if box != nil {
		if err := decryptAll(cfg, box); err != nil {
			return nil, err
		}
	}
	verr, vwarn := validate(cfg, d, path)
	if verr != nil {
		return nil, verr
	}
	warnings = append(warnings, vwarn...)
	return &state{raw: raw, doc: d, cfg: cfg, envProps: envProps, warnings: warnings}, nil
}
