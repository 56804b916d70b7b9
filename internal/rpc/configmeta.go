package rpc

import (
	"context"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// registerConfigMeta adds the config introspection methods (config:read) and the map-key edits (config:update,
// each path they write checked like config/set). sessions, when not nil, keeps an agent with live sessions
// from being renamed and moves a renamed agent's sessions.
func (s *Server) registerConfigMeta(m *config.Manager, sessions *session.Manager) {
	if m == nil {
		return
	}
	s.register(api.MethodConfigValidate, handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.ConfigValidateResult, error) {
		warnings, err := m.Validate()
		if err != nil {
			return api.ConfigValidateResult{Valid: false, Error: err.Error()}, nil
		}
		return api.ConfigValidateResult{Valid: true, Warnings: warnings}, nil
	}))
	s.register(api.MethodConfigMapKeys, inline(handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, p *api.ConfigMapKeysParams) (api.ConfigMapKeysResult, error) {
		keys, err := m.MapKeys(p.Path)
		return api.ConfigMapKeysResult{Path: p.Path, Keys: keys}, err
	})))
	s.register(api.MethodConfigMapKeyCreate, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigMapKeyParams) (api.ConfigMapKeyCreateResult, error) {
		if err := needAll("config/map-key-create", "path", p.Path, "key", p.Key); err != nil {
			return api.ConfigMapKeyCreateResult{}, err
		}
		created, err := m.CreateMapKey(ctx, p.Path, p.Key, s.authorizeConfig(peer))
		return api.ConfigMapKeyCreateResult{Path: p.Path, Key: p.Key, Created: created}, err
	}))
	s.register(api.MethodConfigMapKeyDelete, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigMapKeyParams) (api.ConfigMapKeyDeleteResult, error) {
		if err := needAll("config/map-key-delete", "path", p.Path, "key", p.Key); err != nil {
			return api.ConfigMapKeyDeleteResult{}, err
		}
		deleted, err := m.DeleteMapKey(ctx, p.Path, p.Key, s.authorizeConfig(peer))
		return api.ConfigMapKeyDeleteResult{Path: p.Path, Key: p.Key, Deleted: deleted}, err
	}))
	s.register(api.MethodConfigMapKeyRename, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigMapKeyRenameParams) (api.ConfigMapKeyRenameResult, error) {
		if err := needAll("config/map-key-rename", "path", p.Path, "from", p.From, "to", p.To); err != nil {
			return api.ConfigMapKeyRenameResult{}, err
		}
		res := api.ConfigMapKeyRenameResult{Path: p.Path, From: p.From, To: p.To}
		agents := p.Path == "agents" && sessions != nil
		if agents {
			release, err := sessions.HoldAgent(p.From)
			if err != nil {
				return res, err
			}
			defer release()
		}
		renamed, err := m.RenameMapKey(ctx, p.Path, p.From, p.To, s.authorizeConfig(peer))
		if err != nil {
			return res, err
		}
		if res.Renamed = renamed; renamed && agents {
			res.Warnings = sessions.AgentRenamed(ctx, p.From, p.To)
		}
		return res, nil
	}))
	s.register(api.MethodConfigTemplates, inline(handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.ConfigTemplatesResult, error) {
		return api.ConfigTemplatesResult{Templates: config.Templates()}, nil
	})))
	s.register(api.MethodConfigSections, inline(handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.ConfigSectionsResult, error) {
		return api.ConfigSectionsResult{Sections: config.Sections(m.Current())}, nil
	})))
	s.register(api.MethodConfigStatus, inline(handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.ConfigStatusResult, error) {
		return config.Status(m.Current()), nil
	})))
	s.register(api.MethodConfigCatalog, inline(handle(api.GrantConfigRead, func(context.Context, *Peer, *noParams) (api.CatalogResult, error) {
		return api.CatalogResult{ModelProviders: config.Catalog()}, nil
	})))
	catalogModels := handle(api.GrantConfigRead, func(ctx context.Context, _ *Peer, p *api.CatalogModelsParams) (api.CatalogModelsResult, error) {
		provider := p.ModelProvider
		if provider == "" {
			provider = p.Provider
		}
		if provider == "" {
			return api.CatalogModelsResult{}, router.InvalidParams("config/catalog-models needs model_provider")
		}
		cfg := m.Current()
		res, err := config.CatalogModelsFor(cfg, provider)
		if err != nil || !p.Live {
			return res, err
		}
		return liveModels(ctx, cfg, provider, res)
	})
	catalogModels.Concurrent = true // a live listing waits on the provider
	s.register(api.MethodConfigCatalogModels, catalogModels)
	s.register(api.MethodConfigResolveAliasSource, inline(handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, p *api.ConfigResolveAliasSourceParams) (api.ConfigResolveAliasSourceResult, error) {
		if p.Source == "" {
			return api.ConfigResolveAliasSourceResult{}, router.InvalidParams("config/resolve-alias-source needs source")
		}
		values, err := config.ResolveAliasSource(m.Current(), p.Source)
		return api.ConfigResolveAliasSourceResult{Source: p.Source, Values: values}, err
	})))
}

// needAll refuses the call when one of the named string params (name, value pairs) is empty.
func needAll(method string, nameValues ...string) error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] == "" {
			return router.InvalidParams(method + " needs " + nameValues[i])
		}
	}
	return nil
}

// liveModels replaces the built-in list of res with what the configured provider ref answers, priced the same
// way. A family alone names no endpoint to ask.
func liveModels(ctx context.Context, cfg *config.Config, ref string, res api.CatalogModelsResult) (api.CatalogModelsResult, error) {
	family, alias, ok := strings.Cut(ref, ".")
	if !ok {
		return api.CatalogModelsResult{}, router.InvalidParams("config/catalog-models: live needs a configured <family>.<alias>, not a family")
	}
	pc := cfg.Providers.Models[family][alias]
	models, err := provider.ListModels(ctx, nil, provider.Settings{Family: family, Alias: alias, URI: pc.URI, APIKey: pc.APIKey, ExtraHeaders: pc.ExtraHeaders})
	if err != nil {
		return api.CatalogModelsResult{}, err
	}
	out := api.CatalogModelsResult{ModelProvider: ref, Models: models, Local: res.Local, Live: true}
	for _, name := range models {
		if p, ok := cfg.Cost.PriceOf(name); ok {
			if out.Pricing == nil {
				out.Pricing = map[string]api.ModelPricing{}
			}
			out.Pricing[name] = api.ModelPricing{Input: p.InputPerMillion, Output: p.OutputPerMillion}
		}
	}
	return out, nil
}
