package config

import (
	"maps"
	"slices"
	"strings"
)

// DelegateTargets returns the enabled agents caller may delegate to, sorted: its delegates list, plus the
// agents sharing its risk profile when delegate_same_risk_profile is set, never itself. It does not look at
// delegation_policy (see DelegationAllowed).
func (c *Config) DelegateTargets(caller string) []string {
	a, ok := c.Agents[caller]
	if !ok {
		return nil
	}
	set := map[string]bool{}
	if a.DelegateSameRiskProfile && strings.TrimSpace(a.RiskProfile) != "" {
		for alias, other := range c.Agents {
			if alias != caller && other.IsEnabled() && strings.TrimSpace(other.RiskProfile) == strings.TrimSpace(a.RiskProfile) {
				set[alias] = true
			}
		}
	}
	for _, d := range a.Delegates {
		d = strings.TrimSpace(d)
		if other, ok := c.Agents[d]; ok && d != caller && other.IsEnabled() {
			set[d] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// DelegationAllowed reports whether caller's risk profile sets delegation_policy.mode = "allow".
func (c *Config) DelegationAllowed(caller string) bool {
	a, ok := c.Agents[caller]
	if !ok {
		return false
	}
	name := a.RiskProfile
	if name == "" {
		name = LevelSupervised
	}
	return c.RiskProfiles[name].DelegationPolicy.Mode == DelegationAllow
}
