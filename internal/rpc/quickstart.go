package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/quickstart"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// registerQuickstart adds quickstart/state|fields|validate|apply|dismiss with upstream's shapes. Reading and
// validating need config:read; apply writes the config and needs config:update covering every property it
// writes (checked under the config write lock, as config/set-many). p writes staged identity files (nil: a
// submission with files is refused).
func (s *Server) registerQuickstart(m *config.Manager, p *workspace.Personality) {
	b := &quickstart.Builder{Config: m, Log: s.log}
	if p != nil {
		b.WriteFile = func(agent, name, content string) error {
			_, err := p.Put(agent, name, content)
			return err
		}
	}
	s.register(api.MethodQuickstartState, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, _ *noParams) (api.QuickstartState, error) {
		return quickstart.State(m.Current()), nil
	}))
	s.register(api.MethodQuickstartFields, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, q *api.QuickstartFieldsParams) (api.QuickstartFieldsResult, error) {
		fields, err := quickstart.Fields(q.Section, q.TypeKey)
		return api.QuickstartFieldsResult{Fields: fields}, err
	}))
	s.register(api.MethodQuickstartValidate, handle(api.GrantConfigRead, func(ctx context.Context, _ *Peer, q *api.QuickstartSubmissionParams) (api.QuickstartResult, error) {
		if q.Submission == nil {
			return api.QuickstartResult{}, router.InvalidParams("quickstart/validate needs submission")
		}
		return b.Validate(ctx, q.Submission)
	}))
	s.register(api.MethodQuickstartApply, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, q *api.QuickstartSubmissionParams) (api.QuickstartResult, error) {
		if q.Submission == nil {
			return api.QuickstartResult{}, router.InvalidParams("quickstart/apply needs submission")
		}
		return b.Apply(ctx, q.Submission, nil, s.authorizeConfig(peer))
	}))
	s.register(api.MethodQuickstartDismiss, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, q *api.QuickstartDismissParams) (api.QuickstartDismissResult, error) {
		if err := quickstart.Dismiss(s.log, q.RunID, q.Surface, q.LastStep); err != nil {
			return api.QuickstartDismissResult{}, err
		}
		return api.QuickstartDismissResult{Recorded: true}, nil
	}))
}
