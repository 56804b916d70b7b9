package session

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// The allowed_agents and allowed_tools of a principal's permission profiles (auth.Principal Agents and Tools),
// as the session layer enforces them for every surface: which agents' sessions it may open and drive, and which
// tools its turns are offered and may run.

// ErrAgentNotAllowed (-32012) refuses a session of an agent the principal's permission profiles do not list
// in allowed_agents.
var ErrAgentNotAllowed = errors.New("session: agent not allowed")

// mayUse is ErrAgentNotAllowed when o may not use agent alias.
func (o Owner) mayUse(alias string) error {
	if o.Admin || o.Agents == nil || slices.Contains(o.Agents, alias) {
		return nil
	}
	allowed := "none"
	if len(o.Agents) > 0 {
		allowed = strings.Join(o.Agents, ", ")
	}
	return fmt.Errorf("%w: %s may not use agent %q (its permission profiles' allowed_agents: %s)", ErrAgentNotAllowed,
		o.Principal, alias, allowed)
}

// noTool is a tool name no tool has: a policy allowing only it offers and runs none.
const noTool = "\x00none"

// restrictTools narrows p to the tools o's permission profiles allow (allowed_tools), on top of the agent's
// own policy: hidden from the model and refused if it calls them anyway. An admin, or o.Tools nil, is not
// restricted; an empty list allows no tool.
//
// A principal restricted to some agents is not given the delegate tool either: a delegation runs another
// agent's turn, which it could not prompt itself.
func restrictTools(p *tools.Policy, o Owner) {
	if o.Admin {
		return
	}
	if o.Agents != nil {
		p.ExcludedTools = append(slices.Clone(p.ExcludedTools), tools.NameDelegate)
	}
	if o.Tools == nil {
		return
	}
	if len(p.AllowedTools) == 0 {
		p.AllowedTools = slices.Clone(o.Tools)
	} else {
		p.AllowedTools = slices.DeleteFunc(slices.Clone(p.AllowedTools), func(n string) bool { return !slices.Contains(o.Tools, n) })
	}
	if len(p.AllowedTools) == 0 {
		p.AllowedTools = []string{noTool}
	}
}
