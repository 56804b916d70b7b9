package rpc

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// registerLocales serves locales/list (the registry, no I/O), locales/fetch (catalogue bytes for the client
// to store; the daemon writes nothing) and tools/param-options (live choices for tool parameters).
func (s *Server) registerLocales() {
	s.register(api.MethodLocalesList, inline(handle(api.GrantStatusRead, func(context.Context, *Peer, *json.RawMessage) (api.LocalesListResult, error) {
		res := api.LocalesListResult{Locales: []api.LocaleOption{}}
		for _, l := range i18n.Locales() {
			res.Locales = append(res.Locales, api.LocaleOption{Code: l.Code, Label: l.Label})
		}
		return res, nil
	})))
	fetch := handle(api.GrantLocalesFetch, func(ctx context.Context, _ *Peer, p *api.LocalesFetchParams) (api.LocalesFetchResult, error) {
		got, skipped, err := s.opts.Locales.Fetch(ctx, p.Locale, p.Catalog)
		if err != nil {
			return api.LocalesFetchResult{}, err
		}
		res := api.LocalesFetchResult{Locale: p.Locale, Catalogs: []api.FetchedCatalog{}, Skipped: skipped}
		for _, g := range got {
			res.Catalogs = append(res.Catalogs, api.FetchedCatalog{Name: g.Name, Filename: g.Filename, Content: g.Content})
		}
		return res, nil
	})
	fetch.Concurrent = true // downloads take seconds
	s.register(api.MethodLocalesFetch, fetch)
	s.register(api.MethodToolsParamOptions, handle(api.GrantConfigRead, func(_ context.Context, _ *Peer, p *api.ToolsParamOptionsParams) (api.ToolsParamOptionsResult, error) {
		in := paramInputs(s.config())
		in.Agent = p.Agent
		if ch, ok := p.Args["channel"].(string); ok {
			in.Channel = ch
		}
		opts, err := tools.ParamOptions(p.Domain, in)
		if err != nil {
			return api.ToolsParamOptionsResult{}, err
		}
		return api.ToolsParamOptionsResult{Options: opts}, nil
	}))
}

// paramInputs reduces the config to what tools/param-options reads: agent aliases and channels.
func paramInputs(c *config.Config) tools.ParamInputs {
	var in tools.ParamInputs
	for alias := range c.Agents {
		in.Agents = append(in.Agents, alias)
	}
	sort.Strings(in.Agents)
	for alias, m := range c.Channels.MQTT {
		in.Channels = append(in.Channels, tools.ParamChannel{Ref: "mqtt." + alias, Disabled: !m.Enabled})
	}
	for alias, f := range c.Channels.Filesystem {
		in.Channels = append(in.Channels, tools.ParamChannel{Ref: "filesystem." + alias, Disabled: !f.Enabled})
	}
	for alias, tg := range c.Channels.Telegram {
		in.Channels = append(in.Channels, tools.ParamChannel{Ref: "telegram." + alias, Disabled: !tg.Enabled})
	}
	for alias, irc := range c.Channels.IRC {
		in.Channels = append(in.Channels, tools.ParamChannel{Ref: "irc." + alias, Disabled: !irc.Enabled})
	}
	for name, g := range c.PeerGroups {
		in.Groups = append(in.Groups, tools.ParamGroup{Name: name, Channel: g.Channel, Agents: g.Agents, ExternalPeers: g.ExternalPeers})
	}
	return in
}
