package logs

import (
	"encoding/json"
	"slices"
)

// A principal restricted by allowed_agents may read only the events of its agents: an event's message and
// attributes are that agent's work (tool arguments, outputs, errors). Events attributed to no agent (the
// daemon's own: config, pairing, gateway) are not its to read either. Scope is that rule, shared by every
// surface that serves the log (logs/query, logs/get, logs/subscribe, /api/events and its history).

// Scope is the set of agents whose events a reader may see; nil is every event (an unrestricted reader).
type Scope []string

// Allows reports whether an event attributed to agent (its zeroclaw.agent_alias, "" when none) is visible.
func (s Scope) Allows(agent string) bool {
	return s == nil || agent != "" && slices.Contains(s, agent)
}

// AllowsLine reports whether the event encoded in line (one JSON object, as stored and fanned out) is
// visible. A line that does not decode is not.
func (s Scope) AllowsLine(line []byte) bool {
	if s == nil {
		return true
	}
	return s.Allows(AgentOfLine(line))
}

// AgentOfLine is the zeroclaw.agent_alias of the event encoded in line, "" when it has none or line is not
// an event.
func AgentOfLine(line []byte) string {
	var head struct {
		Zeroclaw struct {
			Agent json.RawMessage `json:"agent_alias"`
		} `json:"zeroclaw"`
	}
	if json.Unmarshal(line, &head) != nil {
		return ""
	}
	var agent string
	if json.Unmarshal(head.Zeroclaw.Agent, &agent) != nil {
		return ""
	}
	return agent
}
