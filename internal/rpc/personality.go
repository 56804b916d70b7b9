package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// registerPersonality adds personality/list|get|put|templates with upstream's shapes. Files are named only from
// the editable set and agents only from config, so no request can reach a path outside an agent's workspace.
func (s *Server) registerPersonality(cfg func() *config.Config, installRoot string) {
	dir := func(alias string) (string, error) {
		if strings.TrimSpace(alias) == "" {
			return "", fmt.Errorf("%w: agent is required", workspace.ErrUnknownAgent)
		}
		return workspace.Dir(cfg(), installRoot, alias)
	}
	s.register(api.MethodPersonalityList, handle(api.GrantPersonalityRead, func(_ context.Context, _ *Peer, p *api.PersonalityListParams) (api.PersonalityListResult, error) {
		out := api.PersonalityListResult{Files: []api.PersonalityFileEntry{}, MaxChars: workspace.MaxFileChars}
		if p.Agent == "" {
			for _, name := range workspace.EditableFiles {
				out.Files = append(out.Files, api.PersonalityFileEntry{Filename: name})
			}
			return out, nil
		}
		d, err := dir(p.Agent)
		if err != nil {
			return out, err
		}
		for _, f := range workspace.List(d) {
			out.Files = append(out.Files, api.PersonalityFileEntry{Filename: f.Name, Exists: f.Exists, Size: f.Size, MtimeMS: f.MtimeMS})
		}
		return out, nil
	}))
	s.register(api.MethodPersonalityGet, handle(api.GrantPersonalityRead, func(_ context.Context, _ *Peer, p *api.PersonalityGetParams) (api.PersonalityGetResult, error) {
		if !workspace.IsEditable(p.Filename) {
			return api.PersonalityGetResult{}, fmt.Errorf("%w: %q (one of %s)", workspace.ErrNotEditable, p.Filename, strings.Join(workspace.EditableFiles, ", "))
		}
		d, err := dir(p.Agent)
		if err != nil {
			return api.PersonalityGetResult{}, err
		}
		c, err := workspace.Get(d, p.Filename)
		if err != nil {
			return api.PersonalityGetResult{}, err
		}
		out := api.PersonalityGetResult{Filename: p.Filename, Exists: c.Exists, Truncated: c.Truncated, MtimeMS: c.MtimeMS}
		if c.Exists {
			out.Content = &c.Text
		}
		return out, nil
	}))
	s.register(api.MethodPersonalityPut, handle(api.GrantPersonalityWrite, func(_ context.Context, _ *Peer, p *api.PersonalityPutParams) (api.PersonalityPutResult, error) {
		if !workspace.IsEditable(p.Filename) {
			return api.PersonalityPutResult{}, fmt.Errorf("%w: %q (one of %s)", workspace.ErrNotEditable, p.Filename, strings.Join(workspace.EditableFiles, ", "))
		}
		d, err := dir(p.Agent)
		if err != nil {
			return api.PersonalityPutResult{}, err
		}
		mtime, err := workspace.Put(d, p.Filename, p.Content)
		if err != nil {
			return api.PersonalityPutResult{}, err
		}
		return api.PersonalityPutResult{BytesWritten: len(p.Content), MtimeMS: mtime}, nil
	}))
	s.register(api.MethodPersonalityTemplates, handle(api.GrantPersonalityRead, func(_ context.Context, _ *Peer, p *api.PersonalityTemplatesParams) (api.PersonalityTemplatesResult, error) {
		c := cfg()
		v := workspace.DefaultVars()
		if alias := strings.TrimSpace(p.Agent); alias != "" {
			v = workspace.VarsFor(c, alias)
		} else if _, ok := c.Agents["default"]; ok {
			v = workspace.VarsFor(c, "default")
		}
		out := api.PersonalityTemplatesResult{Preset: "default", Files: []api.PersonalityTemplate{}}
		for _, t := range workspace.Templates(v) {
			out.Files = append(out.Files, api.PersonalityTemplate{Filename: t.Name, Content: t.Content})
		}
		return out, nil
	}))
}

// workspaceCode maps the workspace sentinels: all are bad requests.
func workspaceCode(err error) (int, bool) {
	switch {
	case errors.Is(err, workspace.ErrNotEditable), errors.Is(err, workspace.ErrTooLong), errors.Is(err, workspace.ErrUnknownAgent):
		return api.CodeInvalidParams, true
	}
	return 0, false
}
