package workspace

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

//go:embed templates/*.md
var templateFS embed.FS

// Vars fill the templates' placeholders: {agent}, {user}, {tz} and {comm_style}.
type Vars struct {
	Agent     string
	User      string
	TZ        string
	CommStyle string
	// Memory selects the memory variant of AGENTS.md and includes MEMORY.md; without it AGENTS.md says the
	// agent has no memory and MEMORY.md is left out.
	Memory bool
}

// DefaultVars are upstream's placeholder defaults.
func DefaultVars() Vars {
	return Vars{Agent: "ZeroClaw", User: "User", TZ: "UTC", Memory: true,
		CommStyle: "Be warm, clear and natural; a relevant emoji now and then is fine, robotic phrasing is not."}
}

// VarsFor returns the template values of agent alias: its alias as the name, and the memory variant unless the
// agent's memory backend (or the install's, when the agent names none) is "none".
func VarsFor(cfg *config.Config, alias string) Vars {
	v := DefaultVars()
	v.Agent = alias
	backend := cfg.Agents[alias].Memory.Backend
	if backend == "" {
		backend = cfg.Memory.Backend
	}
	v.Memory = backend != "none"
	return v
}

// Template is one rendered starter file.
type Template struct {
	Name    string
	Content string
}

// Templates renders the default preset for v: every editable file in EditableFiles order (MEMORY.md only with
// v.Memory).
func Templates(v Vars) []Template {
	r := strings.NewReplacer("{agent}", v.Agent, "{user}", v.User, "{tz}", v.TZ, "{comm_style}", v.CommStyle)
	var out []Template
	for _, name := range EditableFiles {
		src := name
		switch {
		case name == "MEMORY.md" && !v.Memory:
			continue
		case name == "AGENTS.md" && !v.Memory:
			src = "AGENTS.no-memory.md"
		}
		raw, err := templateFS.ReadFile("templates/" + src)
		if err != nil {
			panic(fmt.Sprintf("workspace: template %s is not embedded", src)) // a build mistake, caught by tests
		}
		out = append(out, Template{Name: name, Content: r.Replace(string(raw))})
	}
	return out
}

// Seed writes each template of v into dir (created 0700 if missing) where its file is missing or holds only
// whitespace, and returns the names it wrote. What a user wrote is never overwritten: a missing file is
// created without clobbering (a file that appears meanwhile wins), a blank one is replaced only if it is still
// blank just before, and a symlink or any other non-regular file is left alone. Every step stays inside dir.
func Seed(dir string, v Vars) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: seed: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: seed: %w", err)
	}
	defer root.Close()
	opts := atomicfile.Options{FS: atomicfile.Root(root)}
	var written []string
	var errs []error
	for _, t := range Templates(v) {
		fi, err := root.Lstat(t.Name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = opts.CreateNoClobber(t.Name, []byte(t.Content), 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue // someone wrote it first: theirs stays
			}
		case err != nil:
		case !fi.Mode().IsRegular():
			continue
		default:
			raw, more, rerr := readRegular(root, t.Name, maxReadBytes)
			if rerr != nil || more || strings.TrimSpace(string(raw)) != "" {
				continue
			}
			err = opts.WriteFile(t.Name, []byte(t.Content), 0o600)
		}
		if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
			errs = append(errs, fmt.Errorf("workspace: seed %s: %w", t.Name, err))
			continue
		}
		written = append(written, t.Name)
	}
	return written, errors.Join(errs...)
}
