package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// registerSkills adds skills/bundles|list|read|write|delete with upstream's shapes. Bundles come from config
// only, skill names are checked (lowercase, digits, hyphens), and every file operation stays under
// <install>/shared/; delete archives the skill to shared/skills/_deleted/<name>-<unix seconds>.
func (s *Server) registerSkills(cfg func() *config.Config, installRoot string, clk clock.Clock) {
	shared := skills.NewShared(installRoot)
	bundle := func(alias string) (skills.Bundle, error) {
		return skills.Find(skills.Bundles(cfg(), installRoot), alias)
	}
	s.register(api.MethodSkillsBundles, handle(api.GrantSkillsRead, func(context.Context, *Peer, *noParams) (api.SkillsBundlesResult, error) {
		out := api.SkillsBundlesResult{Bundles: []api.SkillBundleEntry{}}
		for _, b := range skills.Bundles(cfg(), installRoot) {
			out.Bundles = append(out.Bundles, api.SkillBundleEntry{Alias: b.Alias, Directory: b.Directory,
				Include: nonNil(b.Include), Exclude: nonNil(b.Exclude)})
		}
		return out, nil
	}))
	s.register(api.MethodSkillsList, handle(api.GrantSkillsRead, func(_ context.Context, _ *Peer, p *api.SkillsListParams) (api.SkillsListResult, error) {
		c := cfg()
		out := api.SkillsListResult{Skills: []api.SkillEntry{}}
		if p.Bundle == "" || p.Bundle == api.WorkspaceBundle {
			ws, err := workspaceSkills(c, installRoot, p.Agent)
			if err != nil {
				return out, err
			}
			out.Skills = append(out.Skills, ws...)
			if p.Bundle != "" {
				return out, nil
			}
		}
		var targets []skills.Bundle
		if p.Bundle != "" {
			b, err := bundle(p.Bundle)
			if err != nil {
				return api.SkillsListResult{}, err
			}
			targets = []skills.Bundle{b}
		} else {
			for _, b := range skills.Bundles(c, installRoot) {
				if b.Refused == "" {
					targets = append(targets, b)
				}
			}
		}
		for _, b := range targets {
			found, err := shared.List(b, skills.Options{AllowScripts: c.Skills.AllowScripts})
			if err != nil && p.Bundle == "" && errors.Is(err, skills.ErrInvalid) {
				// One unreadable bundle (a directory symlinked out of shared/) does not hide the others.
				s.log.Warn("skills/list skipped a bundle", "component", "skills", "bundle", b.Alias, "err", err)
				out.Warnings = append(out.Warnings, strings.TrimPrefix(err.Error(), skills.ErrInvalid.Error()+": ")+"; bundle skipped")
				continue
			}
			if err != nil {
				return out, err
			}
			for _, sk := range found {
				fm, _ := json.Marshal(sk.Frontmatter)
				out.Skills = append(out.Skills, api.SkillEntry{Bundle: b.Alias, Name: sk.Name, Directory: filepath.Dir(sk.Path), Frontmatter: fm})
			}
		}
		return out, nil
	}))
	s.register(api.MethodSkillsRead, handle(api.GrantSkillsRead, func(_ context.Context, _ *Peer, p *api.SkillRefParams) (api.SkillsReadResult, error) {
		b, err := bundle(p.Bundle)
		if err != nil {
			return api.SkillsReadResult{}, err
		}
		doc, err := shared.Read(b, p.Name)
		if err != nil {
			return api.SkillsReadResult{}, err
		}
		if doc.Frontmatter.Name == "" {
			doc.Frontmatter.Name = p.Name
		}
		fm, _ := json.Marshal(doc.Frontmatter)
		return api.SkillsReadResult{Bundle: p.Bundle, Name: p.Name, Frontmatter: fm, Body: doc.Body}, nil
	}))
	s.register(api.MethodSkillsWrite, handle(api.GrantSkillsWrite, func(_ context.Context, _ *Peer, p *api.SkillsWriteParams) (api.SkillsWriteResult, error) {
		var fm skills.Frontmatter
		if raw := bytes.TrimSpace(p.Frontmatter); len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			return api.SkillsWriteResult{}, fmt.Errorf("%w: frontmatter is required (an object with at least description)", skills.ErrInvalid)
		} else if err := json.Unmarshal(raw, &fm); err != nil {
			return api.SkillsWriteResult{}, fmt.Errorf("%w: frontmatter: %v", skills.ErrInvalid, err)
		}
		b, err := bundle(p.Bundle)
		if err != nil {
			return api.SkillsWriteResult{}, err
		}
		if err := shared.Write(b, p.Name, fm, p.Body); err != nil {
			return api.SkillsWriteResult{}, err
		}
		return api.SkillsWriteResult{Bundle: p.Bundle, Name: p.Name, Written: true}, nil
	}))
	s.register(api.MethodSkillsDelete, handle(api.GrantSkillsWrite, func(_ context.Context, _ *Peer, p *api.SkillRefParams) (api.SkillsDeleteResult, error) {
		b, err := bundle(p.Bundle)
		if err != nil {
			return api.SkillsDeleteResult{}, err
		}
		if _, err := shared.Delete(b, p.Name, clk.Now()); err != nil {
			return api.SkillsDeleteResult{}, err
		}
		return api.SkillsDeleteResult{Bundle: p.Bundle, Name: p.Name, Deleted: true}, nil
	}))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// skillsCode maps the skills sentinels: bad input and a skill that is not there are both invalid params.
func skillsCode(err error) (int, bool) {
	switch {
	case errors.Is(err, skills.ErrInvalid), errors.Is(err, skills.ErrNotFound):
		return api.CodeInvalidParams, true
	}
	return 0, false
}

// workspaceSkills lists the skills of each agent's workspace (skills/ in it), or of agent's only, sorted by
// agent: the skills an agent loads before any bundle's.
func workspaceSkills(c *config.Config, installRoot, agent string) ([]api.SkillEntry, error) {
	aliases := slices.Sorted(maps.Keys(c.Agents))
	if agent != "" {
		if _, ok := c.Agents[agent]; !ok {
			return nil, fmt.Errorf("%w: unknown agent %q", skills.ErrInvalid, agent)
		}
		aliases = []string{agent}
	}
	var out []api.SkillEntry
	for _, alias := range aliases {
		dir, err := workspace.Dir(c, installRoot, alias)
		if err != nil {
			return nil, err
		}
		found, _ := skills.Load(filepath.Join(dir, "skills"), api.WorkspaceBundle, skills.Options{AllowScripts: c.Skills.AllowScripts})
		for _, sk := range found {
			fm, _ := json.Marshal(sk.Frontmatter)
			out = append(out, api.SkillEntry{Bundle: api.WorkspaceBundle, Agent: alias, Name: sk.Name, Directory: filepath.Dir(sk.Path), Frontmatter: fm})
		}
	}
	return out, nil
}
