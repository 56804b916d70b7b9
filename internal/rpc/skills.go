package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
)

// registerSkills adds skills/bundles|list|read|write|delete with upstream's shapes; c resolves bundles from
// config, checks skill names and keeps every file operation under <install>/shared/.
func (s *Server) registerSkills(c *skills.Catalog) {
	s.register(api.MethodSkillsBundles, handle(api.GrantSkillsRead, func(context.Context, *Peer, *noParams) (api.SkillsBundlesResult, error) {
		out := api.SkillsBundlesResult{Bundles: []api.SkillBundleEntry{}}
		for _, b := range c.Bundles() {
			out.Bundles = append(out.Bundles, api.SkillBundleEntry{Alias: b.Alias, Directory: b.Directory,
				Include: nonNil(b.Include), Exclude: nonNil(b.Exclude)})
		}
		return out, nil
	}))
	s.register(api.MethodSkillsList, handle(api.GrantSkillsRead, func(_ context.Context, _ *Peer, p *api.SkillsListParams) (api.SkillsListResult, error) {
		found, warnings, err := c.List(p.Bundle, p.Agent)
		if err != nil {
			return api.SkillsListResult{}, err
		}
		out := api.SkillsListResult{Skills: make([]api.SkillEntry, 0, len(found)), Warnings: warnings}
		for _, sk := range found {
			fm, _ := json.Marshal(sk.Frontmatter)
			out.Skills = append(out.Skills, api.SkillEntry{Bundle: sk.Bundle, Agent: sk.Agent, Name: sk.Name, Directory: sk.Directory, Frontmatter: fm})
		}
		return out, nil
	}))
	s.register(api.MethodSkillsRead, handle(api.GrantSkillsRead, func(_ context.Context, _ *Peer, p *api.SkillRefParams) (api.SkillsReadResult, error) {
		doc, err := c.Read(p.Bundle, p.Name)
		if err != nil {
			return api.SkillsReadResult{}, err
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
		if err := c.Write(p.Bundle, p.Name, fm, p.Body); err != nil {
			return api.SkillsWriteResult{}, err
		}
		return api.SkillsWriteResult{Bundle: p.Bundle, Name: p.Name, Written: true}, nil
	}))
	s.register(api.MethodSkillsDelete, handle(api.GrantSkillsWrite, func(_ context.Context, _ *Peer, p *api.SkillRefParams) (api.SkillsDeleteResult, error) {
		if err := c.Delete(p.Bundle, p.Name); err != nil {
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
