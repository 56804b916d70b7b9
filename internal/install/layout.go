// Package install resolves the install root, data directory and local endpoint of a zeroclaw daemon, and takes
// the ownership locks that keep one daemon per install and per endpoint.
package install

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables read by Resolve and Endpoint.
const (
	EnvConfigDir = "ZEROCLAW_CONFIG_DIR"
	EnvDataDir   = "ZEROCLAW_DATA_DIR"
	EnvWorkspace = "ZEROCLAW_WORKSPACE" // deprecated alias of ZEROCLAW_DATA_DIR
	EnvSocket    = "ZEROCLAW_SOCKET"
)

// DefaultDirName is the install directory created under the home directory when nothing overrides it.
const DefaultDirName = ".zeroclaw"

var (
	// ErrNoHome is returned when a path needs the home directory ("~" or the default install) and none is known.
	ErrNoHome = errors.New("install: home directory unknown")
	// ErrBadAlias is returned by ValidateAlias for an agent alias that cannot name a single directory.
	ErrBadAlias = errors.New("install: invalid agent alias")
)

// Layout is a resolved install: where the config lives and where runtime data goes.
type Layout struct {
	Root     string   // install dir (config dir), absolute
	DataDir  string   // <root>/data unless ZEROCLAW_DATA_DIR rules say otherwise; absolute
	Warnings []string // human-readable notes about ignored or deprecated settings, for the caller to log
}

// ConfigPath is <root>/config.toml.
func (l Layout) ConfigPath() string { return filepath.Join(l.Root, "config.toml") }

// SecretKeyPath is <root>/.secret_key.
func (l Layout) SecretKeyPath() string { return filepath.Join(l.Root, ".secret_key") }

// SessionsDir is <data>/sessions.
func (l Layout) SessionsDir() string { return filepath.Join(l.DataDir, "sessions") }

// StateDir is <data>/state.
func (l Layout) StateDir() string { return filepath.Join(l.DataDir, "state") }

// SharedDir is <root>/shared.
func (l Layout) SharedDir() string { return filepath.Join(l.Root, "shared") }

// InstallLockPath is <data>/daemon.lock, the install-wide ownership lock.
func (l Layout) InstallLockPath() string { return filepath.Join(l.DataDir, "daemon.lock") }

// AgentWorkspace is <root>/agents/<alias>/workspace. The alias is joined as given: callers taking an alias from
// outside must check it with ValidateAlias first.
func (l Layout) AgentWorkspace(alias string) string {
	return filepath.Join(l.Root, "agents", alias, "workspace")
}

// ValidateAlias reports ErrBadAlias (wrapped with the alias) unless alias is one plain path element.
func ValidateAlias(alias string) error {
	if alias == "" || alias == "." || alias == ".." || strings.ContainsAny(alias, `/\`+"\x00") {
		return fmt.Errorf("%w: %q", ErrBadAlias, alias)
	}
	return nil
}

// Ensure creates the install dir and the data dir (0700) if they do not exist. Existing directories keep
// their mode.
func (l Layout) Ensure() error {
	for _, d := range []string{l.Root, l.DataDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("install: create %s: %w", d, err)
		}
	}
	return nil
}

// Endpoint returns the local RPC endpoint: ZEROCLAW_SOCKET verbatim if set and non-empty, else
// <data>/daemon.sock, or on Windows the named pipe PipeName(DataDir).
func (l Layout) Endpoint(getenv func(string) string) string {
	if s := getenv(EnvSocket); s != "" {
		return s
	}
	return defaultEndpoint(l.DataDir)
}

// SocketPath is <data>/daemon.sock, the default endpoint on Unix.
func (l Layout) SocketPath() string { return filepath.Join(l.DataDir, "daemon.sock") }

// PipeName is the Windows named pipe for a data dir: `\\.\pipe\zeroclaw-` followed by the first 16 hex digits
// of SHA-256 of dataDir as UTF-8. It is defined on every platform so it can be computed and tested anywhere.
func PipeName(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return `\\.\pipe\zeroclaw-` + hex.EncodeToString(sum[:])[:16]
}

// Resolve applies the precedence of state.md §1:
// configDirFlag (--config-dir) = ZEROCLAW_CONFIG_DIR > ZEROCLAW_DATA_DIR > ZEROCLAW_WORKSPACE (deprecated) >
// home/.zeroclaw. Empty or whitespace-only values count as unset, other values are trimmed, and "~" or "~/x"
// is expanded with home. getenv is os.Getenv in production. Resolve only reads the filesystem (to look for
// config.toml); it creates nothing. The returned paths are absolute and clean.
func Resolve(configDirFlag string, getenv func(string) string, home string) (Layout, error) {
	home = strings.TrimSpace(home)
	val := func(name string) string { return strings.TrimSpace(getenv(name)) }
	flag := strings.TrimSpace(configDirFlag)
	envConfig, envData, envWorkspace := val(EnvConfigDir), val(EnvDataDir), val(EnvWorkspace)

	var warnings []string
	var layout Layout
	var err error
	switch {
	case flag != "" || envConfig != "":
		source, dir := "--config-dir", flag
		if flag == "" {
			source, dir = EnvConfigDir, envConfig
		} else if envConfig != "" && envConfig != flag {
			warnings = append(warnings, fmt.Sprintf("%s ignored because --config-dir is set", EnvConfigDir))
		}
		for _, name := range []string{EnvDataDir, EnvWorkspace} {
			if val(name) != "" {
				warnings = append(warnings, fmt.Sprintf("%s ignored because %s is set", name, source))
			}
		}
		if dir, err = expand(dir, home); err != nil {
			return Layout{}, err
		}
		layout = Layout{Root: dir, DataDir: filepath.Join(dir, "data")}
	case envData != "":
		if envWorkspace != "" {
			warnings = append(warnings, fmt.Sprintf("%s ignored because %s is set", EnvWorkspace, EnvDataDir))
		}
		if layout, err = fromDataDir(envData, home); err != nil {
			return Layout{}, err
		}
	case envWorkspace != "":
		warnings = append(warnings, fmt.Sprintf("%s is deprecated; use %s", EnvWorkspace, EnvDataDir))
		if layout, err = fromDataDir(envWorkspace, home); err != nil {
			return Layout{}, err
		}
	default:
		if home == "" {
			return Layout{}, fmt.Errorf("%w: cannot place the default install", ErrNoHome)
		}
		root := filepath.Join(home, DefaultDirName)
		layout = Layout{Root: root, DataDir: filepath.Join(root, "data")}
	}

	if layout.Root, err = absolute(layout.Root); err != nil {
		return Layout{}, err
	}
	if layout.DataDir, err = absolute(layout.DataDir); err != nil {
		return Layout{}, err
	}
	layout.Warnings = warnings
	return layout, nil
}

// fromDataDir applies the ZEROCLAW_DATA_DIR rules (a)-(d) to d.
func fromDataDir(d, home string) (Layout, error) {
	d, err := expand(d, home)
	if err != nil {
		return Layout{}, err
	}
	if d, err = absolute(d); err != nil {
		return Layout{}, err
	}
	// (a) D is itself an install.
	if isFile(filepath.Join(d, "config.toml")) {
		return Layout{Root: d, DataDir: filepath.Join(d, "data")}, nil
	}
	// (b) D is the data dir of a sibling .zeroclaw install; (c) D is named like one.
	sibling := filepath.Join(filepath.Dir(d), DefaultDirName)
	if isFile(filepath.Join(sibling, "config.toml")) {
		return Layout{Root: sibling, DataDir: d}, nil
	}
	if base := filepath.Base(d); base == "data" || base == "workspace" {
		return Layout{Root: sibling, DataDir: d}, nil
	}
	// (d) a fresh install rooted at D.
	return Layout{Root: d, DataDir: filepath.Join(d, "data")}, nil
}

// expand replaces a leading "~" ("~", "~/x", and "~\x" on Windows) with home. "~user" is left alone.
func expand(p, home string) (string, error) {
	rest, ok := strings.CutPrefix(p, "~")
	if !ok || (rest != "" && rest[0] != '/' && rest[0] != filepath.Separator) {
		return p, nil
	}
	if home == "" {
		return "", fmt.Errorf("%w: cannot expand %q", ErrNoHome, p)
	}
	return filepath.Join(home, rest), nil
}

func absolute(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("install: absolute path of %q: %w", p, err)
	}
	return abs, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// ACPEndpoint is the ACP server's endpoint (acp.md): <data>/acp.sock, or on Windows the named pipe
// PipeName(DataDir) followed by "-acp". Unlike Endpoint, no environment variable moves it.
func (l Layout) ACPEndpoint() string { return defaultACPEndpoint(l.DataDir) }
