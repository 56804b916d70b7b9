package skills

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// WorkspaceBundle is the source name of the skills of an agent's workspace (its skills/ directory), which
// skills/list also accepts as a bundle name.
const WorkspaceBundle = "workspace"

// Catalog is the skills/* domain of one install: the configured bundles under <install>/shared/ (listed, read,
// written, deleted by skill name, see Shared) and the agents' workspace skills (listed). Bundles come from the
// config in force only. It is safe for concurrent use.
type Catalog struct {
	cfg    func() *config.Config
	root   string
	shared Shared
	now    func() time.Time
	log    *slog.Logger
}

// CatalogOptions wire a Catalog. Config and InstallRoot are required.
type CatalogOptions struct {
	Config      func() *config.Config
	InstallRoot string
	Now         func() time.Time // the archive stamp of a deleted skill; nil means time.Now
	Logger      *slog.Logger
}

// NewCatalog returns the skills domain of the install o names.
func NewCatalog(o CatalogOptions) *Catalog {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Catalog{cfg: o.Config, root: o.InstallRoot, shared: NewShared(o.InstallRoot), now: o.Now, log: o.Logger}
}

// Listed is one skill of a listing: Agent is set for a workspace skill.
type Listed struct {
	Bundle, Agent, Name string
	Directory           string // the skill's directory
	Frontmatter         Frontmatter
}

// Bundles returns the configured bundles, sorted by alias (refused ones included, see Bundle.Refused).
func (c *Catalog) Bundles() []Bundle { return Bundles(c.cfg(), c.root) }

func (c *Catalog) bundle(alias string) (Bundle, error) { return Find(c.Bundles(), alias) }

// List lists the skills of bundle ("" : the workspace skills then every usable bundle's; WorkspaceBundle: the
// workspace skills alone), of agent's workspace only when agent is set. Listing every bundle skips one that
// cannot be read (a directory symlinked out of shared/) and says so in a warning.
func (c *Catalog) List(bundle, agent string) (skills []Listed, warnings []string, err error) {
	cfg := c.cfg()
	if bundle == "" || bundle == WorkspaceBundle {
		ws, err := c.workspaceSkills(cfg, agent)
		if err != nil {
			return nil, nil, err
		}
		skills = ws
		if bundle != "" {
			return skills, nil, nil
		}
	}
	var targets []Bundle
	if bundle != "" {
		b, err := c.bundle(bundle)
		if err != nil {
			return nil, nil, err
		}
		targets = []Bundle{b}
	} else {
		for _, b := range Bundles(cfg, c.root) {
			if b.Refused == "" {
				targets = append(targets, b)
			}
		}
	}
	for _, b := range targets {
		found, err := c.shared.List(b, Options{AllowScripts: cfg.Skills.AllowScripts})
		if err != nil && bundle == "" && errors.Is(err, ErrInvalid) {
			c.log.Warn("skills/list skipped a bundle", "component", "skills", "bundle", b.Alias, "err", err)
			warnings = append(warnings, strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")+"; bundle skipped")
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for _, sk := range found {
			skills = append(skills, Listed{Bundle: b.Alias, Name: sk.Name, Directory: filepath.Dir(sk.Path), Frontmatter: sk.Frontmatter})
		}
	}
	return skills, warnings, nil
}

// workspaceSkills lists the skills of each agent's workspace (skills/ in it), or of agent's only, sorted by
// agent: the skills an agent loads before any bundle's.
func (c *Catalog) workspaceSkills(cfg *config.Config, agent string) ([]Listed, error) {
	aliases := slices.Sorted(maps.Keys(cfg.Agents))
	if agent != "" {
		if _, ok := cfg.Agents[agent]; !ok {
			return nil, fmt.Errorf("%w: unknown agent %q", ErrInvalid, agent)
		}
		aliases = []string{agent}
	}
	var out []Listed
	for _, alias := range aliases {
		dir, err := workspace.Dir(cfg, c.root, alias)
		if err != nil {
			return nil, err
		}
		found, _ := Load(filepath.Join(dir, "skills"), WorkspaceBundle, Options{AllowScripts: cfg.Skills.AllowScripts})
		for _, sk := range found {
			out = append(out, Listed{Bundle: WorkspaceBundle, Agent: alias, Name: sk.Name, Directory: filepath.Dir(sk.Path), Frontmatter: sk.Frontmatter})
		}
	}
	return out, nil
}

// Read returns skill name of bundle; its frontmatter names it even when the file does not.
func (c *Catalog) Read(bundle, name string) (Document, error) {
	b, err := c.bundle(bundle)
	if err != nil {
		return Document{}, err
	}
	doc, err := c.shared.Read(b, name)
	if err != nil {
		return Document{}, err
	}
	if doc.Frontmatter.Name == "" {
		doc.Frontmatter.Name = name
	}
	return doc, nil
}

// Write creates or replaces skill name of bundle (see Shared.Write).
func (c *Catalog) Write(bundle, name string, fm Frontmatter, body string) error {
	b, err := c.bundle(bundle)
	if err != nil {
		return err
	}
	return c.shared.Write(b, name, fm, body)
}

// Delete archives skill name of bundle to shared/skills/_deleted/<name>-<unix seconds> (see Shared.Delete).
func (c *Catalog) Delete(bundle, name string) error {
	b, err := c.bundle(bundle)
	if err != nil {
		return err
	}
	_, err = c.shared.Delete(b, name, c.now())
	return err
}
