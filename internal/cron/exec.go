package cron

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// Tool names of the cron tools, which an agent job may not use unless its allowed_tools names them (upstream's
// CRON_AGENT_DEFAULT_EXCLUDED_TOOLS, less the tools this daemon does not have).
var agentJobExcludedTools = []string{"cron_add", "cron_update", "cron_remove", "cron_run", "schedule"}

// runShell runs a shell job in the agent's workspace through the shell tool, under the decision a turn's
// policy would make for the same call. A call a turn would put to the user is refused: nobody is there to
// approve a scheduled job.
func (s *Scheduler) runShell(ctx context.Context, cfg *config.Config, alias string, j store.CronJob) result {
	prof, err := agent.Resolve(cfg, alias, s.o.InstallRoot)
	if err != nil {
		return result{output: fmt.Sprintf("agent %s: %v", alias, err)}
	}
	args, _ := json.Marshal(map[string]string{"command": j.Command})
	call := tools.Call{ID: "cron-" + j.ID, Name: tools.NameShell, Arguments: args}
	switch d := prof.Policy.Decide(call, prof.Workspace); d.Verdict {
	case tools.Refuse:
		return result{output: policyRefusal + " " + d.Reason}
	case tools.Ask:
		return result{output: policyRefusal + " " + d.Reason + "; a scheduled job runs unattended and nobody can " +
			"approve it (add shell to the risk profile's auto_approve, or give the agent a full profile)"}
	}
	if err := os.MkdirAll(prof.Workspace, 0o700); err != nil {
		return result{output: fmt.Sprintf("shell setup error: workspace: %v", err)}
	}
	res := tools.Execute(ctx, tools.Env{
		Workspace:    prof.Workspace,
		Policy:       prof.Policy,
		Environ:      environ(prof.Env),
		ShellTimeout: s.o.ShellTimeout,
		OutputCap:    store.MaxCronOutputBytes,
		Now:          s.o.Clock.Now,
	}, call)
	out := res.Output
	if !res.IsError && j.ShellOutputFormat == FormatRaw {
		// raw: what the command printed, without the exit-status line, on success.
		out = strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(out, "\n"), "[exit code: 0]"))
	}
	return result{success: !res.IsError, output: out}
}

// runAgent runs an agent job: one unattended turn with upstream's prompt prefix, in a fresh session
// (isolated), the agent's standing cron session (main) or the session the target names.
func (s *Scheduler) runAgent(ctx context.Context, alias string, j store.CronJob) result {
	if s.o.Agents == nil {
		return result{output: "agent job failed: agent turns are not available"}
	}
	name := "cron-job"
	if j.Name != nil && *j.Name != "" {
		name = *j.Name
	}
	prompt := ""
	if j.Prompt != nil {
		prompt = *j.Prompt
	}
	run := AgentRun{Agent: alias, Prompt: fmt.Sprintf("[cron:%s %s] %s", j.ID, name, prompt)}
	switch j.SessionTarget {
	case "", TargetIsolated:
		run.SessionID = "cron-" + s.o.NewID()
	case TargetMain:
		run.SessionID = "cron-main-" + alias
	default:
		run.SessionID = j.SessionTarget
	}
	run.AllowedTools = allowedToolsOf(j)
	if len(run.AllowedTools) == 0 {
		run.ExcludedTools = slices.Clone(agentJobExcludedTools)
	}
	content, err := s.o.Agents.RunUnattended(ctx, run)
	if err != nil {
		return result{output: "agent job failed: " + err.Error()}
	}
	if strings.TrimSpace(content) == "" {
		content = "agent job executed"
	}
	return result{success: true, output: content}
}

// environ renders the agent's configured environment as sorted KEY=value pairs (the shell sees nothing else).
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			continue
		}
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
