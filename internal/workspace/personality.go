package workspace

import (
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Personality is the personality/* domain: the editable files of the agents' workspaces. Files are named only
// from EditableFiles and agents only from the config in force, so no request reaches a path outside an agent's
// workspace. It is safe for concurrent use.
type Personality struct {
	cfg  func() *config.Config
	root string
}

// NewPersonality returns the personality domain of the install at installRoot under the live config cfg.
func NewPersonality(cfg func() *config.Config, installRoot string) *Personality {
	return &Personality{cfg: cfg, root: installRoot}
}

// dir is agent alias's workspace directory; an empty alias or one not in config is ErrUnknownAgent.
func (p *Personality) dir(alias string) (string, error) {
	if strings.TrimSpace(alias) == "" {
		return "", fmt.Errorf("%w: agent is required", ErrUnknownAgent)
	}
	return Dir(p.cfg(), p.root, alias)
}

// editable refuses a name outside EditableFiles, naming them.
func editable(name string) error {
	if !IsEditable(name) {
		return fmt.Errorf("%w: %q (one of %s)", ErrNotEditable, name, strings.Join(EditableFiles, ", "))
	}
	return nil
}

// Files describes the editable files of agent alias's workspace; without an agent, only their names.
func (p *Personality) Files(alias string) ([]Info, error) {
	if alias == "" {
		out := make([]Info, 0, len(EditableFiles))
		for _, name := range EditableFiles {
			out = append(out, Info{Name: name})
		}
		return out, nil
	}
	d, err := p.dir(alias)
	if err != nil {
		return nil, err
	}
	return List(d), nil
}

// Get reads the editable file name of agent alias's workspace.
func (p *Personality) Get(alias, name string) (Content, error) {
	if err := editable(name); err != nil {
		return Content{}, err
	}
	d, err := p.dir(alias)
	if err != nil {
		return Content{}, err
	}
	return Get(d, name)
}

// Put replaces the editable file name of agent alias's workspace (see Put) and returns its modification time.
func (p *Personality) Put(alias, name, content string) (*int64, error) {
	if err := editable(name); err != nil {
		return nil, err
	}
	d, err := p.dir(alias)
	if err != nil {
		return nil, err
	}
	return Put(d, name, content)
}

// Templates renders the default preset for agent alias; without one, for the "default" agent when config has
// it, else with DefaultVars.
func (p *Personality) Templates(alias string) []Template {
	c := p.cfg()
	v := DefaultVars()
	if alias = strings.TrimSpace(alias); alias != "" {
		v = VarsFor(c, alias)
	} else if _, ok := c.Agents["default"]; ok {
		v = VarsFor(c, "default")
	}
	return Templates(v)
}
