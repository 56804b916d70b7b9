package memory

import (
	"fmt"
	"slices"
	"strings"
)

// storeAgent is the agent a memory/store without one writes as: the enabled agent named DefaultAgent, else the
// install's only enabled agent. With several enabled agents and none named default the request is ErrInvalid
// listing them: a memory stored under a name no agent has would never be recalled (README "Memory").
func (m *Manager) storeAgent() (string, error) {
	if m == nil {
		return "", ErrUnavailable
	}
	cfg := m.o.Config()
	var enabled []string
	for alias, a := range cfg.Agents {
		if a.IsEnabled() {
			enabled = append(enabled, alias)
		}
	}
	slices.Sort(enabled)
	switch {
	case slices.Contains(enabled, DefaultAgent):
		return DefaultAgent, nil
	case len(enabled) == 1:
		return enabled[0], nil
	case len(enabled) == 0:
		return "", fmt.Errorf("%w: agent is required: no agent is enabled", ErrInvalid)
	}
	return "", fmt.Errorf("%w: agent is required: this install has several agents (%s)", ErrInvalid, strings.Join(enabled, ", "))
}
