package rpc

import (
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// A SOP's steps run unattended with the daemon's reach, as a scheduled job, so a principal restricted by
// allowed_agents or allowed_tools may start only a SOP it could run itself (cron/add's rule, checkCronAdd):
// every step runs one of its agents and, when its tools are restricted, every step's turn is held (under
// [sop] step_scope_enforce) to an allow-list of tools it may use, the mandatory tools included.

// checkSopRun refuses pr's run of def when a step would reach an agent or a tool pr's selectors keep from it.
func checkSopRun(pr *auth.Principal, cfg *config.Config, def sop.Sop) error {
	if pr == nil || pr.Admin || (pr.Agents == nil && pr.Tools == nil) {
		return nil
	}
	for _, st := range def.Steps {
		agent := st.EffectiveAgent(def.Agent)
		if agent == "" {
			agent = onlyEnabledAgent(cfg)
		}
		if !pr.AllowsAgent(agent) {
			return selectorDenied("step %d of SOP %q runs agent %q, which %s's allowed_agents does not list", st.Number, def.Name, agent, pr.Name)
		}
		if pr.Tools == nil {
			continue
		}
		sc := st.EffectiveScope()
		if !cfg.SOP.StepScopeEnforce || sc == nil || sc.Allow == nil {
			return selectorDenied("step %d of SOP %q may use every tool of its agent (no tool allow-list enforced by "+
				"[sop] step_scope_enforce), beyond %s's allowed_tools", st.Number, def.Name, pr.Name)
		}
		for _, tool := range append(slices.Clone(sc.Allow), cfg.SOP.StepMandatoryTools...) {
			if !slices.Contains(sc.Deny, tool) && !pr.AllowsTool(tool) {
				return selectorDenied("step %d of SOP %q uses tool %q, which %s's allowed_tools does not list", st.Number, def.Name, tool, pr.Name)
			}
		}
	}
	return nil
}

// onlyEnabledAgent is the agent a step naming none runs (the install's only enabled agent), "" when there is
// not exactly one.
func onlyEnabledAgent(cfg *config.Config) string {
	var only string
	for alias, a := range cfg.Agents {
		if a.IsEnabled() {
			if only != "" {
				return ""
			}
			only = alias
		}
	}
	return only
}
