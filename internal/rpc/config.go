package rpc

import (
	"context"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

func (s *Server) registerConfig(m *config.Manager) {
	s.register(api.MethodConfigGet, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, p *api.ConfigGetParams) (any, error) {
		v, err := m.Get(p.Prop)
		if err != nil {
			return nil, err
		}
		if p.Prop == "" {
			return v, nil
		}
		return api.ConfigGetResult{Prop: p.Prop, Value: v}, nil
	}))
	s.register(api.MethodConfigSet, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigSetParams) (any, error) {
		if p.Prop == "" {
			return nil, router.InvalidParams("config/set needs prop")
		}
		if len(p.Value) == 0 {
			return nil, router.InvalidParams("config/set needs value")
		}
		prop, err := m.Set(ctx, p.Prop, p.Value, s.authorizeConfig(peer))
		if err != nil {
			return nil, err
		}
		return api.ConfigSetResult{Prop: prop, Set: true}, nil
	}))
	s.register(api.MethodConfigSetMany, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigSetManyParams) (any, error) {
		sets := make([]config.SetEntry, len(p.Sets))
		for i, e := range p.Sets {
			if e.Prop == "" || len(e.Value) == 0 {
				return nil, jsonrpc.NewError(api.CodeInvalidParams, fmt.Sprintf("sets[%d] needs prop and value", i),
					map[string]any{"index": i, "prop": e.Prop})
			}
			sets[i] = config.SetEntry{Prop: e.Prop, Value: e.Value}
		}
		props, err := m.SetMany(ctx, sets, s.authorizeConfig(peer))
		if err != nil {
			return nil, err
		}
		return api.ConfigSetManyResult{Props: props, Set: true}, nil
	}))
	s.register(api.MethodConfigList, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, p *api.ConfigListParams) (any, error) {
		return api.ConfigListResult{Entries: m.List(p.Prefix)}, nil
	}))
	s.register(api.MethodConfigDelete, handle(api.GrantConfigUpdate, func(ctx context.Context, peer *Peer, p *api.ConfigDeleteParams) (any, error) {
		if p.Prop == "" {
			return nil, router.InvalidParams("config/delete needs prop")
		}
		deleted, err := m.Delete(ctx, p.Prop, s.authorizeConfig(peer))
		if err != nil {
			return nil, err
		}
		return api.ConfigDeleteResult{Prop: p.Prop, Deleted: deleted}, nil
	}))
	s.register(api.MethodConfigReload, handle(api.GrantConfigReload, func(ctx context.Context, _ *Peer, _ *noParams) (any, error) {
		gen, err := m.Reload(ctx)
		if err != nil {
			return nil, err
		}
		return api.ConfigReloadResult{Reloading: true, Reloaded: true, Generation: gen}, nil
	}))
}

// authorizeConfig returns the check config writes run while holding the config write lock: the caller's
// authority is resolved again from the config in force at that moment, so a revocation that landed while the
// request waited for the lock refuses the batch. A forbidden path names its index.
func (s *Server) authorizeConfig(peer *Peer) func(props []string) error {
	return func(props []string) error {
		pr, err := s.resolveAgain(peer)
		if err != nil {
			return forbidden(api.GrantConfigUpdate)
		}
		if !pr.Allows(api.GrantConfigUpdate) {
			return forbidden(api.GrantConfigUpdate)
		}
		for i, prop := range props {
			if !pr.AllowsPath(api.GrantConfigUpdate, prop) {
				return jsonrpc.NewError(api.CodeForbidden, fmt.Sprintf("Forbidden: no permission to update %s", prop),
					map[string]any{"index": i, "prop": prop, "grant": api.GrantConfigUpdate})
			}
		}
		return nil
	}
}

// resolveAgain derives peer's principal from the config in force: from its uid, or, for a gateway caller, through
// the caller's own resolver.
func (s *Server) resolveAgain(peer *Peer) (*auth.Principal, error) {
	if !peer.fixed {
		return s.principalOf(s.config(), peer)
	}
	pr := peer.principal
	if peer.resolve != nil {
		pr = peer.resolve(s.config())
	}
	if pr == nil {
		return nil, forbidden(api.GrantConfigUpdate)
	}
	return pr, nil
}
