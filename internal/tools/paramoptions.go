package tools

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// ErrParamDomain is a tools/param-options domain that does not exist.
var ErrParamDomain = errors.New("tools: unknown parameter domain")

type domainError struct{ name string }

func (e *domainError) Error() string {
	return fmt.Sprintf("unknown variant `%s`, expected one of `channel_refs`, `peer_targets`, `peer_groups`, `agent_aliases`, `tool_names`, `memory_categories`", e.name)
}
func (e *domainError) Is(target error) bool { return target == ErrParamDomain }

// ParamChannel is one configured channel as tools/param-options lists it: "type.alias".
type ParamChannel struct {
	Ref      string
	Disabled bool
}

// ParamGroup is one peer group (peer_groups.<name>).
type ParamGroup struct {
	Name          string
	Channel       string // a channel type, or <type>.<alias>
	Agents        []string
	ExternalPeers []string
}

// ParamInputs is what the choices of a parameter domain are read from: the live config, reduced, and the
// request's agent and sibling arguments.
type ParamInputs struct {
	Agents   []string       // every configured agent alias
	Channels []ParamChannel // every configured channel, in any order
	Groups   []ParamGroup   // every peer group, in any order
	// Agent is the agent asked about ("" or blank: the smallest configured alias); Channel is args.channel
	// (peer_targets keeps the groups of that channel or of its type).
	Agent   string
	Channel string
}

// ParamOptions returns the choices of a domain for an agent, in upstream's order and with its hints. No agent
// lists channels here, so channel_refs is never filtered; tool_names is the built-in set (not MCP tools), as
// upstream's.
func ParamOptions(domain string, in ParamInputs) ([]api.ParamOption, error) {
	out := []api.ParamOption{}
	agent := strings.TrimSpace(in.Agent)
	if agent == "" && len(in.Agents) > 0 {
		agent = slices.Min(in.Agents)
	}
	groups := append([]ParamGroup(nil), in.Groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	switch domain {
	case api.ParamDomainChannelRefs:
		chans := append([]ParamChannel(nil), in.Channels...)
		sort.Slice(chans, func(i, j int) bool { return chans[i].Ref < chans[j].Ref })
		for _, c := range chans {
			o := api.ParamOption{Value: c.Ref}
			if c.Disabled {
				o.Hint = "disabled"
			}
			out = append(out, o)
		}
	case api.ParamDomainPeerTargets:
		seen := map[string]bool{}
		var peers, external []api.ParamOption
		for _, g := range groups {
			if !slices.Contains(g.Agents, agent) {
				continue
			}
			if in.Channel != "" {
				typ, _, _ := strings.Cut(in.Channel, ".")
				if g.Channel != in.Channel && g.Channel != typ {
					continue
				}
			}
			for _, a := range g.Agents {
				if a != agent && !seen[a] {
					seen[a] = true
					peers = append(peers, api.ParamOption{Value: a, Hint: "peer agent"})
				}
			}
			for _, e := range g.ExternalPeers {
				v := "@" + strings.TrimPrefix(e, "@")
				if !seen[v] {
					seen[v] = true
					external = append(external, api.ParamOption{Value: v, Hint: "external peer"})
				}
			}
		}
		out = append(append(out, peers...), external...)
	case api.ParamDomainPeerGroups:
		for _, g := range groups {
			if slices.Contains(g.Agents, agent) {
				out = append(out, api.ParamOption{Value: g.Name, Hint: fmt.Sprintf("group: %d members", len(g.Agents)+len(g.ExternalPeers))})
			}
		}
	case api.ParamDomainAgentAliases:
		names := append([]string(nil), in.Agents...)
		sort.Strings(names)
		for _, n := range names {
			out = append(out, api.ParamOption{Value: n})
		}
	case api.ParamDomainToolNames:
		specs := baseSpecs()
		sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
		for _, s := range specs {
			out = append(out, api.ParamOption{Value: s.Name, Hint: clipHint(s.Description, 60)})
		}
	case api.ParamDomainMemoryCategories:
		for _, c := range []string{"core", "daily", "conversation"} {
			out = append(out, api.ParamOption{Value: c})
		}
	default:
		return nil, &domainError{name: domain}
	}
	return out, nil
}

// clipHint cuts a description to n characters, marking the cut with an ellipsis.
func clipHint(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
