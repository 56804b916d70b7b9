package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// maxNameBytes bounds a skill name.
const maxNameBytes = 64

// CheckName accepts a skill name as upstream writes them: lowercase letters, digits and hyphens, starting with a
// letter or digit, at most 64 bytes. Such a name is also a safe directory name.
func CheckName(name string) error {
	if name == "" || len(name) > maxNameBytes {
		return fmt.Errorf("%w: skill name must be 1 to %d characters, got %d", ErrInvalid, maxNameBytes, len(name))
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0:
		default:
			return fmt.Errorf("%w: skill name %q: use lowercase letters, digits and hyphens", ErrInvalid, clip(name))
		}
	}
	return nil
}

// Shared gives access to one install's <install>/shared directory: every bundle operation resolves its names
// inside it, so no bundle directory, skill name or symlink leads outside.
type Shared struct {
	root string // the install root
}

// NewShared returns the bundle store of the install at root.
func NewShared(root string) Shared { return Shared{root: root} }

// rel returns b's directory relative to <install>/shared.
func (s Shared) rel(b Bundle) (string, error) {
	rel, err := filepath.Rel(filepath.Join(s.root, "shared"), b.Directory)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: skill bundle %q lies outside <install>/shared/", ErrInvalid, b.Alias)
	}
	return rel, nil
}

// escapes reports whether err is os.Root's refusal of a path that leads out of it (a symlink out of
// <install>/shared/). The Root is what keeps such paths out; this only tells the caller's bad path (ErrInvalid)
// from a failure of the daemon. The os package exports no sentinel for it, so its message is matched.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// outside is the error for a bundle or skill path that leads out of <install>/shared/.
func outside(b Bundle, name string) error {
	if name == "" {
		return fmt.Errorf("%w: skill bundle %q: its directory leads outside <install>/shared/ (a symlink)", ErrInvalid, b.Alias)
	}
	return fmt.Errorf("%w: skill bundle %q: the path of skill %q leads outside <install>/shared/ (a symlink)", ErrInvalid, b.Alias, name)
}

// failed wraps err of operation op on skill name of bundle b: a path leading out of shared/ is ErrInvalid.
func failed(op string, b Bundle, name string, err error) error {
	if escapes(err) {
		return outside(b, name)
	}
	return fmt.Errorf("skills: %s %s/%s: %w", op, b.Alias, name, err)
}

func (s Shared) open() (*os.Root, error) {
	dir := filepath.Join(s.root, "shared")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	return r, nil
}

// List loads the skills of bundle b (include and exclude do not apply: this is the bundle's content).
func (s Shared) List(b Bundle, opts Options) ([]Skill, error) {
	found, _, err := s.load(b, opts)
	return found, err
}

// load loads bundle b's skills through <install>/shared, so that a bundle directory that is (or passes
// through) a symlink leading out of shared/ is refused rather than read. A missing directory has no skills.
func (s Shared) load(b Bundle, opts Options) ([]Skill, []Dropped, error) {
	rel, err := s.rel(b)
	if err != nil {
		return nil, nil, err
	}
	r, err := os.OpenRoot(filepath.Join(s.root, "shared"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("skills: %w", err)
	}
	defer r.Close()
	br, err := r.OpenRoot(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if escapes(err) {
		return nil, nil, outside(b, "")
	} else if err != nil {
		return nil, nil, fmt.Errorf("%w: skill bundle %q: %v", ErrInvalid, b.Alias, err)
	}
	defer br.Close()
	found, dropped := loadRoot(br, b.Directory, b.Alias, opts)
	return found, dropped, nil
}

// Read returns the parsed SKILL.md of skill name in bundle b.
func (s Shared) Read(b Bundle, name string) (Document, error) {
	if err := CheckName(name); err != nil {
		return Document{}, err
	}
	rel, err := s.rel(b)
	if err != nil {
		return Document{}, err
	}
	r, err := s.open()
	if err != nil {
		return Document{}, err
	}
	defer r.Close()
	raw, err := readSkillFile(r, filepath.Join(rel, name, "SKILL.md"))
	if errors.Is(err, fs.ErrNotExist) {
		return Document{}, fmt.Errorf("%w: skill bundle %q has no skill %q", ErrNotFound, b.Alias, name)
	}
	if err != nil {
		return Document{}, failed("read", b, name, err)
	}
	return Parse(raw)
}

// Write creates or replaces skill name in bundle b with fm and body, atomically. The front matter's name must
// be empty or name itself, and a description is required. A new skill also gets the empty scripts/,
// references/ and assets/ directories.
func (s Shared) Write(b Bundle, name string, fm Frontmatter, body string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if fm.Name != "" && fm.Name != name {
		return fmt.Errorf("%w: frontmatter.name %q differs from name %q", ErrInvalid, clip(fm.Name), name)
	}
	fm.Name = name
	if strings.TrimSpace(fm.Description) == "" {
		return fmt.Errorf("%w: frontmatter.description is required", ErrInvalid)
	}
	for _, v := range []string{fm.Description, fm.License, fm.Author, fm.Version, fm.Category} {
		if len(v) > maxValueBytes || !utf8.ValidString(v) {
			return fmt.Errorf("%w: a frontmatter field is over %d bytes or not UTF-8", ErrInvalid, maxValueBytes)
		}
	}
	if len(fm.Tags) > maxTags {
		return fmt.Errorf("%w: more than %d tags", ErrInvalid, maxTags)
	}
	for _, t := range fm.Tags {
		if t == "" || len(t) > maxKeyBytes {
			return fmt.Errorf("%w: a tag is empty or over %d bytes", ErrInvalid, maxKeyBytes)
		}
	}
	text := Serialize(Document{Frontmatter: fm, Body: body})
	if len(text) > MaxSkillBytes {
		return fmt.Errorf("%w: the skill would be %d bytes, more than %d", ErrInvalid, len(text), MaxSkillBytes)
	}
	if _, err := Parse(text); err != nil { // what is written must load
		return err
	}
	rel, err := s.rel(b)
	if err != nil {
		return err
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	defer r.Close()
	dir := filepath.Join(rel, name)
	_, statErr := r.Lstat(dir)
	if escapes(statErr) {
		return outside(b, name)
	}
	if err := r.MkdirAll(dir, 0o700); err != nil {
		return failed("write", b, name, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		for _, sub := range []string{"scripts", "references", "assets"} {
			if err := r.Mkdir(filepath.Join(dir, sub), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return failed("write", b, name, err)
			}
		}
	}
	err = atomicfile.Options{FS: atomicfile.Root(r)}.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o600)
	if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return failed("write", b, name, err)
	}
	return nil
}

// Delete archives skill name of bundle b: its directory moves to <install>/shared/skills/_deleted/<name>-<unix
// seconds> (with a -N suffix if that exists). Nothing is removed. It returns the archive path.
func (s Shared) Delete(b Bundle, name string, now time.Time) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	rel, err := s.rel(b)
	if err != nil {
		return "", err
	}
	r, err := s.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	dir := filepath.Join(rel, name)
	if fi, err := r.Lstat(dir); escapes(err) {
		return "", outside(b, name)
	} else if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: skill bundle %q has no skill %q", ErrNotFound, b.Alias, name)
	}
	if err := r.MkdirAll(DeletedDir, 0o700); err != nil {
		return "", fmt.Errorf("skills: delete %s/%s: %w", b.Alias, name, err)
	}
	base := fmt.Sprintf("%s-%d", name, now.Unix())
	for i := 1; i <= 100; i++ {
		target := filepath.Join(DeletedDir, base)
		if i > 1 {
			target = filepath.Join(DeletedDir, fmt.Sprintf("%s-%d", base, i))
		}
		if _, err := r.Lstat(target); err == nil {
			continue
		}
		if err := r.Rename(dir, target); err != nil {
			return "", fmt.Errorf("skills: delete %s/%s: %w", b.Alias, name, err)
		}
		_ = atomicfile.Root(r).SyncDir(DeletedDir)
		return filepath.Join(s.root, "shared", target), nil
	}
	return "", fmt.Errorf("skills: delete %s/%s: too many archived copies named %s", b.Alias, name, base)
}
