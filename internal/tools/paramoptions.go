package tools

import (
	"errors"
	"fmt"
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

// ParamInputs is what the choices of a parameter domain are read from: the live config, reduced.
type ParamInputs struct {
	Agents   []string       // every configured agent alias
	Channels []ParamChannel // every configured channel, in any order
}

// ParamOptions returns the choices of a domain for an agent, in upstream's order and with its hints. This
// daemon has no peer groups, so peer_targets and peer_groups have no choices, and no agent lists channels,
// so channel_refs is never filtered; tool_names is the built-in set (not MCP tools), as upstream's.
func ParamOptions(domain string, in ParamInputs) ([]api.ParamOption, error) {
	out := []api.ParamOption{}
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
	case api.ParamDomainPeerTargets, api.ParamDomainPeerGroups:
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
