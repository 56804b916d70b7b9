package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Sandbox errors returned by Resolve (wrapped with the offending path).
var (
	ErrOutsideWorkspace = errors.New("tools: path is outside the workspace")
	ErrForbiddenPath    = errors.New("tools: path is forbidden")
	ErrNoWorkspace      = errors.New("tools: no workspace configured")
	// ErrProtectedPath: the path is the daemon's install root or below it (config.toml, .secret_key, data/),
	// which no tool may touch at any level.
	ErrProtectedPath = errors.New("tools: path is inside the daemon's install root (config, secrets and data), which no tool may touch")
)

// Protected is what no tool may read, write or list, whatever the level, the workspace and forbidden_paths
// say: the daemon's install root (config.toml, .secret_key, data/...) and its data directory when that lives
// elsewhere. Except lists directories inside a root that stay usable (the agent's workspace, which lives under
// <install>/agents by default); an entry that is a root, not below one, or is a "data" directory of a root or
// below it, is ignored. The zero value protects nothing.
type Protected struct {
	Roots  []string
	Except []string
}

// covers reports whether the canonical path p is protected.
func (g Protected) covers(p string) bool {
	var roots []string
	for _, r := range g.Roots {
		if strings.TrimSpace(r) != "" {
			roots = append(roots, canonicalForms(r)...)
		}
	}
	hit := false
	for _, r := range roots {
		if within(r, p) {
			hit = true
			break
		}
	}
	if !hit {
		return false
	}
	for _, e := range g.Except {
		if strings.TrimSpace(e) == "" {
			continue
		}
		for _, ec := range canonicalForms(e) {
			if within(ec, p) && g.usableException(roots, ec) {
				return false
			}
		}
	}
	return true
}

// usableException reports whether the canonical directory ec may be exempted: strictly below a root, and not a
// root, nor inside any root's data directory.
func (g Protected) usableException(roots []string, ec string) bool {
	below := false
	for _, r := range roots {
		if ec == r || within(ec, r) || within(filepath.Join(r, "data"), ec) {
			return false
		}
		if within(r, ec) {
			below = true
		}
	}
	return below
}

// canonicalForms returns the canonical form of an absolute directory (made absolute first) and its lexical one
// when they differ.
func canonicalForms(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return []string{filepath.Clean(dir)}
	}
	canon, err := canonicalize(abs)
	if err != nil || canon == abs {
		return []string{abs}
	}
	return []string{canon, abs}
}

// maxSymlinkHops bounds symlink expansion during canonicalization, like the kernel's ELOOP limit.
const maxSymlinkHops = 40

// Resolve canonicalizes p against workspace and returns the canonical absolute path it designates.
// A relative p is taken relative to the workspace; the path is cleaned and every symlink on it is expanded,
// including dangling ones and those in components that do not exist yet. A result outside the canonical
// workspace fails with ErrOutsideWorkspace; a result equal to or below any of forbidden (after ~ expansion,
// relative entries taken relative to the workspace, canonicalized the same way) fails with ErrForbiddenPath.
// On error the returned path is empty. Callers must operate on the returned path, not on p.
func Resolve(workspace, p string, forbidden []string) (string, error) {
	loc, err := locate(workspace, p, forbidden, Protected{})
	if err != nil {
		return "", err
	}
	if !loc.inside {
		return "", fmt.Errorf("%w: %s", ErrOutsideWorkspace, p)
	}
	return loc.path, nil
}

// location is a canonicalized path and where it lies relative to the workspace.
type location struct {
	path      string // canonical absolute path
	workspace string // canonical workspace
	inside    bool
}

// locate canonicalizes p like Resolve but reports an outside path instead of failing, so policy can decide. A
// path guard protects fails with ErrProtectedPath.
func locate(workspace, p string, forbidden []string, guard Protected) (location, error) {
	ws, err := canonicalWorkspace(workspace)
	if err != nil {
		return location{}, err
	}
	if strings.ContainsRune(p, 0) {
		return location{}, fmt.Errorf("tools: path contains a NUL byte")
	}
	abs := p
	if !filepath.IsAbs(abs) {
		// No lexical Clean here: ".." must apply after the symlinks before it, as the kernel does.
		abs = ws + string(filepath.Separator) + abs
	}
	canon, err := canonicalize(abs)
	if err != nil {
		return location{}, fmt.Errorf("tools: resolve %s: %w", p, err)
	}
	for _, f := range forbidden {
		fc, ok := canonicalForbidden(ws, f)
		if !ok {
			continue
		}
		for _, form := range fc {
			if within(form, canon) {
				return location{}, fmt.Errorf("%w: %s (matches %s)", ErrForbiddenPath, p, f)
			}
		}
	}
	if guard.covers(canon) {
		return location{}, fmt.Errorf("%w: %s", ErrProtectedPath, p)
	}
	return location{path: canon, workspace: ws, inside: within(ws, canon)}, nil
}

func canonicalWorkspace(workspace string) (string, error) {
	if strings.TrimSpace(workspace) == "" {
		return "", ErrNoWorkspace
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("tools: workspace %s: %w", workspace, err)
	}
	ws, err := canonicalize(abs)
	if err != nil {
		return "", fmt.Errorf("tools: workspace %s: %w", workspace, err)
	}
	return ws, nil
}

// canonicalForbidden returns the forms of a forbidden_paths entry to match against: the canonical form and,
// when it differs, the lexical one (so a forbidden symlink also forbids its own name). ok is false for blanks.
func canonicalForbidden(ws, f string) ([]string, bool) {
	f = strings.TrimSpace(f)
	if f == "" {
		return nil, false
	}
	if f == "~" || strings.HasPrefix(f, "~/") || strings.HasPrefix(f, `~`+string(filepath.Separator)) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			// Without a home directory the entry names nothing real; it is kept literal (workspace-relative).
			f = filepath.Join(ws, f)
		} else {
			f = filepath.Join(home, f[1:])
		}
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(ws, f)
	}
	lexical := filepath.Clean(f)
	canon, err := canonicalize(lexical)
	if err != nil || canon == lexical {
		return []string{lexical}, true
	}
	return []string{canon, lexical}, true
}

// within reports whether p is base or lies below it. Both must be clean absolute paths.
func within(base, p string) bool {
	if p == base {
		return true
	}
	if strings.HasSuffix(base, string(filepath.Separator)) { // a root such as "/"
		return strings.HasPrefix(p, base)
	}
	return strings.HasPrefix(p, base+string(filepath.Separator))
}

// canonicalize expands every symlink on the absolute path abs, component by component, the way the kernel
// would walk it. Components that do not exist are kept literally (nothing below them can be a symlink) but
// ".." after them is still applied, so the result is where an open or create of abs would land.
func canonicalize(abs string) (string, error) {
	vol := filepath.VolumeName(abs)
	root := vol + string(filepath.Separator)
	pending := splitPath(abs[len(vol):])
	resolved := root
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tvol := filepath.VolumeName(target)
			resolved = tvol + string(filepath.Separator)
			target = target[len(tvol):]
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator })
}
