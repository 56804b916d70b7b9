package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// registerPersonality adds personality/list|get|put|templates with upstream's shapes; p keeps every file inside
// an agent's workspace.
func (s *Server) registerPersonality(p *workspace.Personality) {
	s.register(api.MethodPersonalityList, handle(api.GrantPersonalityRead, func(_ context.Context, _ *Peer, q *api.PersonalityListParams) (api.PersonalityListResult, error) {
		out := api.PersonalityListResult{Files: []api.PersonalityFileEntry{}, MaxChars: workspace.MaxFileChars}
		files, err := p.Files(q.Agent)
		if err != nil {
			return out, err
		}
		for _, f := range files {
			out.Files = append(out.Files, api.PersonalityFileEntry{Filename: f.Name, Exists: f.Exists, Size: f.Size, MtimeMS: f.MtimeMS})
		}
		return out, nil
	}))
	s.register(api.MethodPersonalityGet, handle(api.GrantPersonalityRead, func(_ context.Context, _ *Peer, q *api.PersonalityGetParams) (api.PersonalityGetResult, error) {
		c, err := p.Get(q.Agent, q.Filename)
		if err != nil {
			return api.PersonalityGetResult{}, err
		}
		out := api.PersonalityGetResult{Filename: q.Filename, Exists: c.Exists, Truncated: c.Truncated, MtimeMS: c.MtimeMS}
		if c.Exists {
			out.Content = &c.Text
		}
		return out, nil
	}))
	s.register(api.MethodPersonalityPut, handle(api.GrantPersonalityWrite, func(_ context.Context, _ *Peer, q *api.PersonalityPutParams) (api.PersonalityPutResult, error) {
		mtime, err := p.Put(q.Agent, q.Filename, q.Content)
		if err != nil {
			return api.PersonalityPutResult{}, err
		}
		return api.PersonalityPutResult{BytesWritten: len(q.Content), MtimeMS: mtime}, nil
	}))
	s.register(api.MethodPersonalityTemplates, handle(api.GrantPersonalityRead, func(_ context.Context, _ *Peer, q *api.PersonalityTemplatesParams) (api.PersonalityTemplatesResult, error) {
		out := api.PersonalityTemplatesResult{Preset: "default", Files: []api.PersonalityTemplate{}}
		for _, t := range p.Templates(q.Agent) {
			out.Files = append(out.Files, api.PersonalityTemplate{Filename: t.Name, Content: t.Content})
		}
		return out, nil
	}))
}
