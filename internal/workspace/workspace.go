// Package workspace holds an agent's identity files (SOUL.md, IDENTITY.md, USER.md...): it seeds them from
// templates without ever overwriting what a user wrote, reads them for each turn's system prompt, and lets the
// personality/* methods list, read and replace them (upstream/agent-workspace.md §2). It also answers what a
// client asks about a workspace directory: a confined listing (ListDir) and the git HEAD it is on (GitHead).
package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// MaxFileChars is the most characters (not bytes) of one identity file: longer files are cut in the system
// prompt, and personality/put refuses longer content.
const MaxFileChars = 20_000

// maxReadBytes bounds what one read takes from disk: enough for MaxFileChars characters of any width plus the
// surrounding whitespace that is trimmed, so a huge file costs no more than this.
const maxReadBytes = 4*MaxFileChars + 4096

// maxGetBytes bounds what personality/get returns of a file (it returns the whole file, cap or not, up to this).
const maxGetBytes = 1 << 20

// PromptFiles are the files of the system prompt, in prompt order. BOOTSTRAP.md is never seeded nor edited
// here; it is injected when a user puts it there.
var PromptFiles = []string{"SOUL.md", "IDENTITY.md", "USER.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md"}

// EditableFiles are the files personality/* may read and write, in upstream's order.
var EditableFiles = []string{"SOUL.md", "IDENTITY.md", "USER.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md", "MEMORY.md"}

// Sentinels; the rpc layer maps both to invalid params.
var (
	// ErrNotEditable reports a file name outside EditableFiles (a path, BOOTSTRAP.md, anything else).
	ErrNotEditable = errors.New("workspace: not an editable file")
	// ErrTooLong reports content over MaxFileChars characters.
	ErrTooLong = fmt.Errorf("workspace: content exceeds %d char limit", MaxFileChars)
	// ErrUnknownAgent reports an agent alias that is not in config.
	ErrUnknownAgent = errors.New("workspace: unknown agent")
)

// IsEditable reports whether name is one of EditableFiles (an exact name: no directories).
func IsEditable(name string) bool { return slices.Contains(EditableFiles, name) }

// Dir returns agent alias's workspace directory: agents.<alias>.workspace.path, else
// <installRoot>/agents/<alias>/workspace. The alias must be a configured agent, so that no client-chosen name
// becomes a path.
func Dir(cfg *config.Config, installRoot, alias string) (string, error) {
	a, ok := cfg.Agents[alias]
	if !ok {
		return "", fmt.Errorf("%w %q", ErrUnknownAgent, alias)
	}
	dir := a.Workspace.Path
	if dir == "" {
		dir = filepath.Join(installRoot, "agents", alias, "workspace")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir, nil
}

// File is one identity file as read from a workspace.
type File struct {
	Name      string
	Content   string // trimmed; at most MaxFileChars characters
	Truncated bool   // the file had more than MaxFileChars characters
}

// Load reads the present, non-blank PromptFiles of dir, in order, each trimmed and cut at MaxFileChars
// characters. Missing files, blank files, and anything that is not a regular file (a symlink, a directory) are
// left out. It reads at most a bounded number of bytes per file, so it is cheap enough to call on every turn.
func Load(dir string) []File {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []File
	for _, name := range PromptFiles {
		if f, ok := loadFile(root, name); ok {
			out = append(out, f)
		}
	}
	return out
}

// loadFile reads one identity file for Load; ok is false when it gives no section (missing, not a regular file,
// unreadable, blank).
func loadFile(root *os.Root, name string) (File, bool) {
	raw, _, err := readRegular(root, name, maxReadBytes)
	if err != nil {
		return File{}, false
	}
	text := strings.TrimSpace(toValidUTF8(raw))
	if text == "" {
		return File{}, false
	}
	content, cut := cutChars(text, MaxFileChars)
	return File{Name: name, Content: content, Truncated: cut}, true
}

// readRegular reads up to limit bytes of name under root, refusing anything but a regular file: the name is
// checked with Lstat (no symlink is followed) and the opened file is checked again. more reports bytes left.
func readRegular(root *os.Root, name string, limit int) (data []byte, more bool, err error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("workspace: %s is not a regular file", name)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || !os.SameFile(st, fi) {
		return nil, false, fmt.Errorf("workspace: %s changed while it was opened", name)
	}
	data, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// cutChars returns s cut to at most n characters, and whether it was cut.
func cutChars(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

func toValidUTF8(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// Render renders the identity section of the system prompt (upstream's "Project Context"): a heading, one
// sentence, then each file as "### NAME" and its content, a cut file followed by a note. Without files it
// returns "".
func Render(files []File) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Project Context\n\nThe following workspace files define your identity, behavior, and context.\n\n")
	for _, f := range files {
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", f.Name, f.Content)
		if f.Truncated {
			fmt.Fprintf(&b, "[... truncated at %d chars — use `read` for full file]\n\n", MaxFileChars)
		}
	}
	return b.String()
}

// Info describes one editable file for personality/list.
type Info struct {
	Name    string
	Exists  bool
	Size    int64
	MtimeMS *int64
}

// List describes EditableFiles in dir. A file that is not a regular file counts as absent.
func List(dir string) []Info {
	out := make([]Info, 0, len(EditableFiles))
	for _, name := range EditableFiles {
		info := Info{Name: name}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			ms := fi.ModTime().UnixMilli()
			info.Exists, info.Size, info.MtimeMS = true, fi.Size(), &ms
		}
		out = append(out, info)
	}
	return out
}

// Content is one editable file read whole (up to a bound) for personality/get.
type Content struct {
	Exists    bool
	Text      string
	Truncated bool // longer than MaxFileChars characters (the prompt sees it cut)
	MtimeMS   *int64
}

// Get reads the editable file name in dir. A missing file (or one that is not a regular file) is Exists false.
func Get(dir, name string) (Content, error) {
	if !IsEditable(name) {
		return Content{}, fmt.Errorf("%w: %s", ErrNotEditable, name)
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Content{}, nil
	} else if err != nil {
		return Content{}, fmt.Errorf("workspace: %w", err)
	}
	defer root.Close()
	raw, more, err := readRegular(root, name, maxGetBytes)
	if err != nil {
		if fi, lerr := root.Lstat(name); lerr == nil && !fi.Mode().IsRegular() || errors.Is(err, fs.ErrNotExist) {
			return Content{}, nil
		}
		return Content{}, fmt.Errorf("workspace: read %s: %w", name, err)
	}
	text := toValidUTF8(raw)
	c := Content{Exists: true, Text: text, Truncated: more || utf8.RuneCountInString(text) > MaxFileChars}
	if fi, err := root.Lstat(name); err == nil {
		ms := fi.ModTime().UnixMilli()
		c.MtimeMS = &ms
	}
	return c, nil
}

// Put replaces the editable file name in dir with content, atomically, creating dir (0700) if needed. Content
// over MaxFileChars characters is refused (ErrTooLong). A symlink at name is replaced, never followed. It
// returns the new file's modification time in milliseconds.
func Put(dir, name, content string) (*int64, error) {
	if !IsEditable(name) {
		return nil, fmt.Errorf("%w: %s", ErrNotEditable, name)
	}
	if utf8.RuneCountInString(content) > MaxFileChars {
		return nil, ErrTooLong
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	defer root.Close()
	err = atomicfile.Options{FS: atomicfile.Root(root)}.WriteFile(name, []byte(content), 0o600)
	if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return nil, fmt.Errorf("workspace: write %s: %w", name, err)
	}
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, nil
	}
	ms := fi.ModTime().UnixMilli()
	return &ms, nil
}
