// Package skills finds the skills an agent follows (SKILL.md procedures in its workspace's skills/ directory
// and in the bundles it opts into under <install>/shared/), renders them into the system prompt in full or
// compact form, and reads, writes and archives bundle skills for the skills/* methods
// (upstream/agent-workspace.md §5).
package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Bounds on discovery: a skills directory offers at most maxSkillsPerSource skills, and the script audit looks
// at no more than maxAuditEntries entries, maxAuditDepth levels deep, of one skill.
const (
	maxSkillsPerSource = 256
	maxAuditEntries    = 2048
	maxAuditDepth      = 6
)

// DeletedDir is where deleted skills are archived, relative to <install>/shared.
const DeletedDir = "skills/_deleted"

// Bundle is a configured skill bundle with its resolved directory.
type Bundle struct {
	Alias     string
	Directory string // absolute, cleaned
	Include   []string
	Exclude   []string
	// Refused says why the bundle cannot be used ("" when it can): its directory lies outside
	// <install>/shared/, another bundle has the same directory, or its alias is reserved.
	Refused string
}

// Admits reports whether the bundle offers the skill named name: include (when set) lists it and exclude does
// not; exclude always wins.
func (b Bundle) Admits(name string) bool {
	if slices.Contains(b.Exclude, name) {
		return false
	}
	return len(b.Include) == 0 || slices.Contains(b.Include, name)
}

// Bundles resolves cfg's [skill_bundles], sorted by alias; see Bundle.Refused.
func Bundles(cfg *config.Config, root string) []Bundle {
	aliases := make([]string, 0, len(cfg.SkillBundles))
	for a := range cfg.SkillBundles {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	seen := map[string]string{}
	out := make([]Bundle, 0, len(aliases))
	for _, a := range aliases {
		bc := cfg.SkillBundles[a]
		b := Bundle{Alias: a, Directory: config.BundleDir(root, a, bc), Include: bc.Include, Exclude: bc.Exclude}
		switch {
		case strings.HasPrefix(a, "_") || strings.ContainsAny(a, `/\`):
			b.Refused = "the alias is reserved"
		case !config.InShared(root, b.Directory):
			b.Refused = "its directory lies outside <install>/shared/"
		case seen[b.Directory] != "":
			b.Refused = "skill_bundles." + seen[b.Directory] + " uses the same directory"
		default:
			seen[b.Directory] = a
		}
		out = append(out, b)
	}
	return out
}

// Find returns the bundle alias names among bundles, or an error wrapping ErrInvalid when it is not configured
// or is refused.
func Find(bundles []Bundle, alias string) (Bundle, error) {
	for _, b := range bundles {
		if b.Alias == alias {
			if b.Refused != "" {
				return Bundle{}, fmt.Errorf("%w: skill bundle %q is refused: %s", ErrInvalid, alias, b.Refused)
			}
			return b, nil
		}
	}
	return Bundle{}, fmt.Errorf("%w: skill bundle %q is not defined under [skill_bundles]", ErrInvalid, alias)
}

// Skill is one loaded skill.
type Skill struct {
	Name        string
	Description string
	Body        string // the instructions
	Always      bool
	Path        string // absolute path of its SKILL.md
	Source      string // "workspace" or the bundle alias
	Frontmatter Frontmatter
}

// Dropped is a skill that was found but not loaded, with the reason.
type Dropped struct {
	Source, Dir, Reason string
}

// Options tune discovery.
type Options struct {
	AllowScripts bool // [skills] allow_scripts
}

// ForAgent loads the skills agent alias follows, in upstream's precedence: its workspace's skills/ directory,
// then each bundle of agents.<alias>.skill_bundles in order (unknown and refused bundles are skipped). The
// first skill of a name wins; later ones are shadowed. Bundle include/exclude lists apply to their bundle. The
// skills are returned in that order; dropped ones (scripts, unreadable or malformed SKILL.md) are listed apart.
func ForAgent(cfg *config.Config, root, alias, agentWorkspace string) ([]Skill, []Dropped) {
	opts := Options{AllowScripts: cfg.Skills.AllowScripts}
	var out []Skill
	var dropped []Dropped
	names := map[string]bool{}
	add := func(found []Skill, drop []Dropped, admit func(string) bool) {
		dropped = append(dropped, drop...)
		for _, s := range found {
			if names[s.Name] || !admit(s.Name) {
				continue
			}
			names[s.Name] = true
			out = append(out, s)
		}
	}
	found, drop := Load(filepath.Join(agentWorkspace, "skills"), WorkspaceBundle, opts)
	add(found, drop, func(string) bool { return true })
	bundles := Bundles(cfg, root)
	shared := NewShared(root)
	for _, ref := range cfg.Agents[alias].SkillBundles {
		b, err := Find(bundles, ref)
		if err != nil {
			continue
		}
		found, drop, err := shared.load(b, opts)
		if err != nil {
			drop = append(drop, Dropped{Source: b.Alias, Dir: b.Directory, Reason: err.Error()})
		}
		add(found, drop, b.Admits)
	}
	return out, dropped
}

// Load loads every skill of one skills directory: each subdirectory (sorted; names starting with "." or "_",
// symlinks and plain files are not skills) holding a SKILL.md. A missing directory has no skills.
func Load(dir, source string, opts Options) ([]Skill, []Dropped) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil
	}
	defer root.Close()
	return loadRoot(root, dir, source, opts)
}

// loadRoot is Load on an opened directory; dir is its path, for the skills' paths.
func loadRoot(root *os.Root, dir, source string, opts Options) ([]Skill, []Dropped) {
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, []Dropped{{Source: source, Dir: dir, Reason: err.Error()}}
	}
	var out []Skill
	var dropped []Dropped
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		if len(out) == maxSkillsPerSource {
			dropped = append(dropped, Dropped{Source: source, Dir: filepath.Join(dir, name), Reason: fmt.Sprintf("more than %d skills in %s", maxSkillsPerSource, dir)})
			break
		}
		s, err := loadOne(root, dir, name, source, opts)
		if err != nil {
			dropped = append(dropped, Dropped{Source: source, Dir: filepath.Join(dir, name), Reason: err.Error()})
			continue
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	return out, dropped
}

// loadOne loads the skill in subdirectory name of root; nil, nil when it has no SKILL.md.
func loadOne(root *os.Root, dir, name, source string, opts Options) (*Skill, error) {
	raw, err := readSkillFile(root, filepath.Join(name, "SKILL.md"))
	if errors.Is(err, fs.ErrNotExist) {
		for _, m := range []string{"SKILL.toml", "manifest.toml"} {
			if _, err := root.Lstat(filepath.Join(name, m)); err == nil {
				return nil, fmt.Errorf("%s manifests are not supported; write a SKILL.md", m)
			}
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !opts.AllowScripts {
		if script := findScript(root, name); script != "" {
			return nil, fmt.Errorf("ships a script (%s); set [skills] allow_scripts = true to load it", script)
		}
	}
	doc, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	s := &Skill{Name: doc.Frontmatter.Name, Description: doc.Frontmatter.Description, Body: strings.TrimSpace(doc.Body),
		Always: doc.Frontmatter.Always, Path: filepath.Join(dir, name, "SKILL.md"), Source: source, Frontmatter: doc.Frontmatter}
	if s.Name == "" {
		s.Name = name
	}
	if s.Description == "" {
		s.Description = firstLine(doc.Body)
	}
	s.Frontmatter.Name, s.Frontmatter.Description = s.Name, s.Description
	return s, nil
}

// firstLine is the first non-empty line of body that is not a heading, or "No description".
func firstLine(body string) string {
	for l := range strings.SplitSeq(body, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return t
		}
	}
	return "No description"
}

// readSkillFile reads a SKILL.md under root: a regular file (not a symlink) of at most MaxSkillBytes.
func readSkillFile(root *os.Root, name string) (string, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: SKILL.md is not a regular file", ErrInvalid)
	}
	if fi.Size() > MaxSkillBytes {
		return "", fmt.Errorf("%w: SKILL.md is %d bytes, more than %d", ErrInvalid, fi.Size(), MaxSkillBytes)
	}
	f, err := root.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSkillBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxSkillBytes {
		return "", fmt.Errorf("%w: SKILL.md is more than %d bytes", ErrInvalid, MaxSkillBytes)
	}
	return string(b), nil
}

// findScript returns the first script-like file of skill directory name (by extension, or a "#!" first line),
// or "". Symlinks are not followed; past the audit bounds the skill counts as shipping a script.
func findScript(root *os.Root, name string) string {
	seen := 0
	var walk func(dir string, depth int) string
	walk = func(dir string, depth int) string {
		entries, err := fs.ReadDir(root.FS(), dir)
		if err != nil {
			return ""
		}
		for _, e := range entries {
			if seen++; seen > maxAuditEntries || depth > maxAuditDepth {
				return dir + " (too many files to audit)"
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if s := walk(p, depth+1); s != "" {
					return s
				}
			case e.Type().IsRegular():
				switch strings.ToLower(filepath.Ext(e.Name())) {
				case ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd":
					return p
				}
				if f, err := root.Open(p); err == nil {
					var head [2]byte
					n, _ := io.ReadFull(f, head[:])
					f.Close()
					if n == 2 && string(head[:]) == "#!" {
						return p
					}
				}
			}
		}
		return ""
	}
	return walk(name, 0)
}

// Render renders the skills section of the system prompt. Full mode inlines every skill's instructions;
// compact mode lists names, descriptions and locations (relative to workspace when inside it) and tells the
// model to load a skill with read_skill, inlining only the skills marked always. No skills render "".
func Render(skills []Skill, compact bool, workspace string) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Available Skills\n\n")
	if compact {
		b.WriteString("Only each skill's summary is listed below, to keep the context small.\n" +
			"When a skill fits the task, call `read_skill` with its `<name>` to load its instructions first.\n" +
			"Skills marked always carry their instructions here already.\n" +
			"`location` tells where the skill's file is.\n\n")
	} else {
		b.WriteString("Each skill's instructions are included below.\n" +
			"Follow them directly when a skill fits the task; there is no need to open the skill files.\n\n")
	}
	b.WriteString("<available_skills>\n")
	for _, s := range skills {
		b.WriteString("  <skill>\n")
		element(&b, 4, "name", s.Name)
		element(&b, 4, "description", s.Description)
		loc := s.Path
		if compact {
			if rel, err := filepath.Rel(workspace, s.Path); err == nil && !strings.HasPrefix(rel, "..") {
				loc = rel
			}
		}
		element(&b, 4, "location", loc)
		if (!compact || s.Always) && s.Body != "" {
			b.WriteString("    <instructions>\n")
			element(&b, 6, "instruction", s.Body)
			b.WriteString("    </instructions>\n")
		}
		b.WriteString("  </skill>\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}

var xmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func element(b *strings.Builder, indent int, tag, text string) {
	fmt.Fprintf(b, "%s<%s>%s</%s>\n", strings.Repeat(" ", indent), tag, xmlText.Replace(text), tag)
}
