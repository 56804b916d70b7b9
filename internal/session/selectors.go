package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
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

// restrictCron bounds the cron_* tools of o's turn, whose policy is p, to what o could run itself, as cron/add
// and cron/patch over the socket do: a job runs unattended with the daemon's reach, so a model allowed
// cron_add must not get the shell, or an agent job with tools p does not offer, through it. An admin, or a
// principal without selectors, is not restricted.
func restrictCron(c tools.Cron, p tools.Policy, o Owner) tools.Cron {
	if c == nil || o.Admin || (o.Agents == nil && o.Tools == nil) {
		return c
	}
	return boundCron{Cron: c, p: p}
}

// boundCron is the scheduler as a restricted principal's cron tools reach it.
type boundCron struct {
	tools.Cron
	p tools.Policy
}

var errShellJob = errors.New("a shell job runs the shell, which this turn may not use (allowed_tools of its principal)")

func (b boundCron) offers(name string) bool { return len(b.p.Offered([]tools.Spec{{Name: name}})) == 1 }

// jobTools is what an agent job of this turn may use: the named tools, each one the turn may use, or none
// named: the turn's own (never more than it has).
func (b boundCron) jobTools(named []string) ([]string, error) {
	for _, n := range named {
		if !b.offers(n) {
			return nil, fmt.Errorf("allowed_tools %q of the job is not a tool this turn may use", n)
		}
	}
	if len(named) > 0 {
		return named, nil
	}
	var out []string
	for _, n := range tools.Names() {
		if b.offers(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (b boundCron) Add(ctx context.Context, r tools.CronAdd) (api.CronJob, error) {
	if !strings.EqualFold(r.JobType, "agent") {
		if !b.offers(tools.NameShell) {
			return api.CronJob{}, errShellJob
		}
		return b.Cron.Add(ctx, r)
	}
	var err error
	if r.AllowedTools, err = b.jobTools(r.AllowedTools); err != nil {
		return api.CronJob{}, err
	}
	return b.Cron.Add(ctx, r)
}

// job is the turn's agent's job id.
func (b boundCron) job(ctx context.Context, id string) (api.CronJob, error) {
	jobs, err := b.Cron.List(ctx)
	if err != nil {
		return api.CronJob{}, err
	}
	for _, j := range jobs {
		if j.ID == id {
			return j, nil
		}
	}
	return api.CronJob{}, fmt.Errorf("cron job %s not found", id)
}

// Update refuses a change to a shell job without the shell, and to an agent job whose turns would use tools
// this turn may not (its allowed_tools after the patch).
func (b boundCron) Update(ctx context.Context, id string, p tools.CronPatch) (api.CronJob, error) {
	j, err := b.job(ctx, id)
	if err != nil {
		return api.CronJob{}, err
	}
	if j.JobType != "agent" {
		if !b.offers(tools.NameShell) {
			return api.CronJob{}, errShellJob
		}
		return b.Cron.Update(ctx, id, p)
	}
	have := j.AllowedTools
	if p.AllowedTools != nil {
		have = *p.AllowedTools
	}
	narrowed, err := b.jobTools(have)
	if err != nil {
		return api.CronJob{}, err
	}
	p.AllowedTools = &narrowed
	return b.Cron.Update(ctx, id, p)
}

// Run refuses to run a shell job without the shell, as cron/trigger does.
func (b boundCron) Run(ctx context.Context, id string) (api.CronTriggerResult, error) {
	j, err := b.job(ctx, id)
	if err != nil {
		return api.CronTriggerResult{}, err
	}
	if j.JobType != "agent" && !b.offers(tools.NameShell) {
		return api.CronTriggerResult{}, errShellJob
	}
	return b.Cron.Run(ctx, id)
}

// restrictDelegate bounds the delegated turns of a tool-restricted principal's turn (policy p) to the tools
// p offers: another agent's turn must not run, for it, a tool its allowed_tools keeps from it. A Delegator
// that cannot be narrowed is not offered to such a principal.
func restrictDelegate(d tools.Delegator, p tools.Policy, o Owner) tools.Delegator {
	if d == nil || o.Admin || o.Tools == nil {
		return d
	}
	n, ok := d.(tools.NarrowingDelegator)
	if !ok {
		return nil
	}
	allowed, _ := boundCron{p: p}.jobTools(nil)
	allowed = slices.DeleteFunc(allowed, func(name string) bool { return name == tools.NameDelegate })
	if len(allowed) == 0 {
		allowed = []string{noTool}
	}
	return n.Narrowed(allowed)
}
