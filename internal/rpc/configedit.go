package rpc

import (
	"context"
	"path/filepath"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// registerConfigEdit adds config/patch (config:update, each prop checked like config/set), config/drift and
// config/delete-plan (config:read), and config/migrate (config:update on every path: it rewrites the file).
func (s *Server) registerConfigEdit(m *config.Manager) {
	if m == nil {
		return
	}
	s.register(api.MethodConfigPatch, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigPatchParams) (api.ConfigPatchResult, error) {
		ops := make([]config.PatchEntry, len(p.Ops))
		for i, op := range p.Ops {
			ops[i] = config.PatchEntry{Op: op.Op, Prop: op.Prop, Value: op.Value, Comment: op.Comment}
		}
		props, err := m.Patch(ctx, ops, !p.OverrideDrift, s.authorizeConfig(peer))
		if err != nil {
			return api.ConfigPatchResult{}, err
		}
		return api.ConfigPatchResult{Props: props, Saved: true}, nil
	}))
	s.register(api.MethodConfigDrift, handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.ConfigDriftResult, error) {
		drift, err := m.Drift()
		res := api.ConfigDriftResult{Drifted: make([]api.ConfigDriftEntry, len(drift))}
		if err != nil {
			res.Error = err.Error()
		}
		for i, d := range drift {
			res.Drifted[i] = api.ConfigDriftEntry{Path: d.Path, Secret: d.Secret, Drifted: true,
				InMemoryValue: d.InMemory, OnDiskValue: d.OnDisk}
		}
		return res, nil
	}))
	s.register(api.MethodConfigDeletePlan, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, p *api.ConfigDeletePlanParams) (api.ConfigDeletePlanResult, error) {
		if err := needAll("config/delete-plan", "path", p.Path, "key", p.Key); err != nil {
			return api.ConfigDeletePlanResult{}, err
		}
		plan, err := m.DeletePlan(p.Path, p.Key)
		if err != nil {
			return api.ConfigDeletePlanResult{}, err
		}
		res := api.ConfigDeletePlanResult{Path: plan.Path, Key: plan.Key, Allowed: plan.Allowed,
			Blockers: make([]api.ConfigRefSite, len(plan.Blockers)), Scrubs: []api.ConfigRefSite{}}
		for i, b := range plan.Blockers {
			res.Blockers[i] = api.ConfigRefSite{Path: b.Path, RawValue: b.RawValue, Message: b.Message}
		}
		return res, nil
	}))
	s.register(api.MethodConfigMigrate, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, _ *noParams) (api.ConfigMigrateResult, error) {
		pr, err := s.resolveAgain(peer)
		if err != nil || !pr.AllowsPath(api.GrantConfigUpdate, "") {
			return api.ConfigMigrateResult{}, jsonrpc.NewError(api.CodeForbidden,
				"Forbidden: config/migrate rewrites the whole file and needs config:update on every path",
				map[string]any{"grant": api.GrantConfigUpdate})
		}
		res, err := m.Migrate(ctx)
		if err != nil {
			return api.ConfigMigrateResult{}, err
		}
		out := api.ConfigMigrateResult{SchemaVersion: config.SchemaVersion}
		if mig := res.Migration; mig != nil {
			out.Migrated, out.From, out.Notes, out.Warnings = true, mig.From, mig.Notes, mig.Warnings
			out.BackupPath = filepath.Base(res.Backup)
			for _, p := range res.Problems {
				out.Problems = append(out.Problems, p.String())
			}
		}
		return out, nil
	}))
}
