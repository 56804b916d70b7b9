// Package service installs the daemon as a per-user service of the host's service manager: a systemd user
// unit on Linux, a launchd agent on macOS. It writes the unit file (idempotently) and asks the manager to
// start, stop or report on it.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// EnvUnitDir overrides the directory the unit file is written to. The service manager is then not told about
// it (nothing is enabled, started or stopped): for packaging and tests.
const EnvUnitDir = "ZEROCLAW_SERVICE_DIR"

// ErrUnsupported reports a platform without a supported service manager.
var ErrUnsupported = errors.New("service: not supported on this platform (systemd user units on Linux, launchd agents on macOS)")

// ErrNotInstalled reports an action that needs the unit file when there is none.
var ErrNotInstalled = errors.New("service: not installed")

// Options say what the service runs and where its unit lives.
type Options struct {
	// Exe is the absolute path of the zeroclaw binary the service runs.
	Exe string
	// ConfigDir is the install root, passed to the daemon explicitly.
	ConfigDir string
	// Home is the user's home directory (default unit directories live below it).
	Home string
	// UnitDir, when set, replaces the default unit directory; the service manager is then left alone.
	UnitDir string
	// Run runs the service manager's command (systemctl, launchctl) and returns its combined output; nil runs
	// it for real.
	Run func(ctx context.Context, name string, args ...string) (string, error)
}

// Outcome is what Install or Uninstall did.
type Outcome struct {
	Path    string // the unit file
	Content string // what it holds (Install)
	Changed bool   // false: it was already so
	Notes   []string
}

// Unit is the unit file for o: where it goes and what it holds.
func Unit(o Options) (path, content string, err error) {
	if !filepath.IsAbs(o.Exe) || !filepath.IsAbs(o.ConfigDir) {
		return "", "", fmt.Errorf("service: the binary and the config directory must be absolute paths (%q, %q)", o.Exe, o.ConfigDir)
	}
	dir, err := unitDir(o)
	if err != nil {
		return "", "", err
	}
	content, err = render(o)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(dir, unitName), content, nil
}

func unitDir(o Options) (string, error) {
	if o.UnitDir != "" {
		return filepath.Abs(o.UnitDir)
	}
	if o.Home == "" {
		return "", errors.New("service: no home directory to put the unit in (set HOME)")
	}
	return defaultUnitDir(o.Home), nil
}

// managed reports whether the service manager should be told: not when the unit lives in a chosen directory.
func (o Options) managed() bool { return o.UnitDir == "" }

// Install writes the unit file (0644, temp file + rename) unless it already holds exactly this content, then
// tells the service manager to reload its units.
func Install(ctx context.Context, o Options) (Outcome, error) {
	path, content, err := Unit(o)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Path: path, Content: content}
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, []byte(content)) {
		out.Notes = append(out.Notes, "already installed; unit unchanged")
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return Outcome{}, fmt.Errorf("service: %w", err)
		}
		if err := atomicfile.WriteFile(path, []byte(content), 0o644); err != nil {
			return Outcome{}, fmt.Errorf("service: write %s: %w", path, err)
		}
		out.Changed = true
	}
	if o.managed() {
		out.Notes = append(out.Notes, afterInstall(ctx, o)...)
	} else {
		out.Notes = append(out.Notes, "unit written to a chosen directory: the service manager was not told")
	}
	return out, nil
}

// Uninstall stops and disables the service (when the manager can be reached), then removes the unit file. A
// missing unit is not an error: there is nothing to do.
func Uninstall(ctx context.Context, o Options) (Outcome, error) {
	path, _, err := Unit(o)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Path: path}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		out.Notes = append(out.Notes, "not installed; nothing to remove")
		return out, nil
	}
	if o.managed() {
		out.Notes = append(out.Notes, beforeUninstall(ctx, o, path)...)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Outcome{}, fmt.Errorf("service: %w", err)
	}
	out.Changed = true
	if o.managed() {
		out.Notes = append(out.Notes, afterUninstall(ctx, o)...)
	}
	return out, nil
}

// Start, Stop and Status ask the service manager; the unit must be installed.
func Start(ctx context.Context, o Options) (string, error)  { return act(ctx, o, "start") }
func Stop(ctx context.Context, o Options) (string, error)   { return act(ctx, o, "stop") }
func Status(ctx context.Context, o Options) (string, error) { return act(ctx, o, "status") }

func act(ctx context.Context, o Options, action string) (string, error) {
	path, _, err := Unit(o)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: no unit at %s", ErrNotInstalled, path)
	}
	if !o.managed() {
		return "", fmt.Errorf("service: the unit lives in a chosen directory (%s), which the service manager does not read; %s it yourself", EnvUnitDir, action)
	}
	return manage(ctx, o, path, action)
}

// run runs a service manager command.
func (o Options) run(ctx context.Context, name string, args ...string) (string, error) {
	if o.Run != nil {
		return o.Run(ctx, name, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	b, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(b)), err
}
