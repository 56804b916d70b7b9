package rpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// A scheduled job runs unattended with the daemon's reach, so a principal restricted by allowed_agents or
// allowed_tools may schedule only what it could run itself: jobs of its agents, a shell job only when it may
// use the shell tool, and an agent job whose turns use only its tools (a job naming none gets the principal's).

// selectorDenied is the -32012 of a job the principal's selectors do not allow.
func selectorDenied(format string, args ...any) error {
	return jsonrpc.NewError(api.CodeForbidden, "Forbidden: "+fmt.Sprintf(format, args...), nil)
}

// jobTypeOf is the job type cron/add creates for p (cron.Scheduler.Add's rule).
func jobTypeOf(p *api.CronAddParams) string {
	if p.JobType != "" {
		return strings.ToLower(p.JobType)
	}
	if strings.TrimSpace(p.Command) == "" && strings.TrimSpace(p.Prompt) != "" {
		return cron.TypeAgent
	}
	return cron.TypeShell
}

// checkCronAdd refuses a job pr may not schedule, and narrows an agent job's tools to pr's.
func checkCronAdd(pr *auth.Principal, p *api.CronAddParams) error {
	if pr == nil || pr.Admin {
		return nil
	}
	if agent := strings.TrimSpace(p.Agent); !pr.AllowsAgent(agent) {
		return selectorDenied("%s may not schedule jobs of agent %q (allowed_agents)", pr.Name, agent)
	}
	switch jobTypeOf(p) {
	case cron.TypeShell:
		if !pr.AllowsTool("shell") {
			return selectorDenied("a shell job runs the shell, which %s's allowed_tools does not list", pr.Name)
		}
	case cron.TypeAgent:
		if pr.Tools == nil {
			return nil
		}
		if len(p.AllowedTools) == 0 {
			if len(pr.Tools) == 0 {
				return selectorDenied("%s's allowed_tools is empty: an agent job would run with tools it may not use", pr.Name)
			}
			p.AllowedTools = slices.Clone(pr.Tools)
			return nil
		}
		for _, tool := range p.AllowedTools {
			if !pr.AllowsTool(tool) {
				return selectorDenied("allowed_tools %q of the job is not in %s's allowed_tools", tool, pr.Name)
			}
		}
	}
	return nil
}

// checkCronJob refuses pr's change to an existing job it could not have scheduled (another agent's, or a shell
// job without the shell tool).
func checkCronJob(pr *auth.Principal, j api.CronJob) error {
	if pr == nil || pr.Admin {
		return nil
	}
	if !pr.AllowsAgent(j.AgentAlias) {
		return selectorDenied("%s may not change jobs of agent %q (allowed_agents)", pr.Name, j.AgentAlias)
	}
	if j.JobType == cron.TypeShell && !pr.AllowsTool("shell") {
		return selectorDenied("a shell job runs the shell, which %s's allowed_tools does not list", pr.Name)
	}
	return nil
}

// checkCronTarget refuses a non-admin principal's agent job aimed at a session it does not own: the job's
// turns would run in that session with the scheduler's authority, reading its history and writing into it.
// "isolated" and "main" (the agent's standing cron session) need no check; a named session must exist and be
// the principal's (so a job cannot wait for another owner to create a session under an id it chose).
func (s *Server) checkCronTarget(ctx context.Context, peer *Peer, target string) error {
	pr := peer.Principal()
	if pr == nil || pr.Admin {
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(target)) {
	case "", cron.TargetIsolated, cron.TargetMain:
		return nil
	}
	if s.opts.Sessions == nil {
		return selectorDenied("%s may not aim a job at session %q: sessions are not served here", pr.Name, target)
	}
	if _, err := s.opts.Sessions.State(ctx, peer.owner(), target); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return selectorDenied("%s may not aim a job at session %q: no session of %s has that id (use isolated or main, or a session you own)", pr.Name, target, pr.Name)
		}
		return err
	}
	return nil
}

// A job's prompt, command and run outputs are its agent's work, which a principal restricted to other agents
// may not read: cron/list pages through pr.AgentScope()'s jobs only, and checkCronRead refuses one job.

// checkCronRead refuses pr a job of an agent its allowed_agents does not list (cron/list's rule, for one job).
func checkCronRead(pr *auth.Principal, j api.CronJob) error {
	if pr == nil || pr.Admin || pr.Agents == nil || pr.AllowsAgent(j.AgentAlias) {
		return nil
	}
	return selectorDenied("%s may not read jobs of agent %q (allowed_agents)", pr.Name, j.AgentAlias)
}
