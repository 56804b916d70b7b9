package session

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// seedWorkspace writes the agent's starter identity files where they are missing or blank (never over a
// user's content). A failure is logged: the session runs with whatever files are there.
func (m *Manager) seedWorkspace(cfg *config.Config, alias, dir string) {
	written, err := workspace.Seed(dir, workspace.VarsFor(cfg, alias))
	if err != nil {
		m.log.Warn("seeding the workspace identity files", "agent", alias, "err", err)
	}
	if len(written) > 0 {
		m.log.Debug("workspace identity files seeded", "agent", alias, "files", strings.Join(written, ","))
	}
}

// turnSkills loads the skills of the session's agent for one turn (its workspace's skills/, then its bundles)
// and returns the rendered skills section. In compact mode it also gives env the read_skill lookup; when the
// risk profile does not offer that tool, compact mode has no way to load a skill, so upstream's rule applies:
// it falls back to full.
func (m *Manager) turnSkills(cfg *config.Config, s *session, prof agent.Profile, env *tools.Env, files agentFiles) string {
	found, dropped := files.skills, files.dropped
	for _, d := range dropped {
		m.log.Debug("skill not loaded", "agent", s.alias, "source", d.Source, "dir", d.Dir, "reason", d.Reason)
	}
	if len(found) == 0 {
		return ""
	}
	compact := cfg.Skills.PromptInjectionMode == config.SkillsModeCompact
	if compact {
		byName := make(map[string]skills.Skill, len(found))
		for _, sk := range found {
			byName[sk.Name] = sk
		}
		env.ReadSkill = func(name string) (string, error) {
			sk, ok := byName[name]
			if !ok {
				return "", fmt.Errorf("no skill named %q is available", name)
			}
			return skills.Serialize(skills.Document{Frontmatter: sk.Frontmatter, Body: sk.Body}), nil
		}
		if !slices.ContainsFunc(prof.Policy.Offered(tools.SpecsFor(*env)), func(sp tools.Spec) bool { return sp.Name == tools.NameReadSkill }) {
			env.ReadSkill, compact = nil, false // the risk profile does not offer read_skill
		}
	}
	return skills.Render(found, compact, prof.Workspace)
}

// agentFiles is what a turn reads from the agent's directories for its system prompt: the identity files and
// the skills.
type agentFiles struct {
	identity []workspace.File
	skills   []skills.Skill
	dropped  []skills.Dropped
}

// readAgentFiles starts reading the agent's files for a turn on a goroutine (they are read while the rest of the
// turn is prepared); the returned function waits for them.
func (m *Manager) readAgentFiles(cfg *config.Config, alias string, prof agent.Profile) func() agentFiles {
	ch := make(chan agentFiles, 1)
	go func() {
		var f agentFiles
		f.skills, f.dropped = skills.ForAgent(cfg, m.o.InstallRoot, alias, prof.Workspace)
		f.identity = m.identity.Load(prof.Workspace)
		ch <- f
	}()
	return sync.OnceValue(func() agentFiles { return <-ch })
}

// promptParts is what one turn's system prompt is built from.
type promptParts struct {
	now        time.Time
	identity   []workspace.File // the agent's workspace identity files (Manager.identity)
	workDir    string           // the session's working directory (an ACP session's cwd may differ)
	configured string           // agents.<alias>.system_prompt
	level      tools.Level
	offered    []tools.Spec
	skills     string // the rendered skills section, or ""
	deferred   string // the MCP deferred tools section, or ""
	model      string
}

// buildSystemPrompt assembles the system prompt of an RPC or ACP turn in upstream's order
// (upstream/agent-workspace.md §3a): the current date, the workspace identity files, the agent's configured
// system_prompt (ours), tool honesty (when tools are offered), safety, skills, the working directory and the
// runtime. Each section is trimmed and sections are separated by a blank line; empty ones are dropped. The
// identity files are looked at on every turn (workspace.Cache reads one again once it changed), so an edited
// SOUL.md shapes the very next turn.
func buildSystemPrompt(p promptParts) string {
	sections := []string{
		dateSection(p.now),
		workspace.Render(p.identity),
		p.configured,
		honestySection(p.offered),
		safetySection(p.level),
		p.skills,
		p.deferred,
		"## Workspace\n\nWorking directory: `" + p.workDir + "`",
		runtimeSection(p.model),
	}
	var b strings.Builder
	for _, s := range sections {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func dateSection(now time.Time) string {
	_, off := now.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("## CRITICAL CONTEXT: CURRENT DATE\n\nToday is %s (UTC offset: %c%02d:%02d). Take it as the truth for "+
		"every relative date (\"yesterday\", \"in two weeks\", \"the last 7 days\").", now.Format("2006-01-02"), sign, off/3600, off%3600/60)
}

func honestySection(offered []tools.Spec) string {
	if len(offered) == 0 {
		return ""
	}
	return "## CRITICAL: Tool Honesty\n\n" +
		"- Report what a tool actually returned. Never invent or guess a result; an empty result is \"No results found.\"\n" +
		"- When a tool call fails, say so and give the error instead of filling the gap.\n" +
		"- When you cannot tell whether a call worked, ask rather than assume."
}

func safetySection(level tools.Level) string {
	var b strings.Builder
	b.WriteString("## Safety\n\n- Never send private data anywhere it was not meant to go.\n")
	switch level {
	case tools.LevelFull:
		b.WriteString("- Use the tools directly: this agent runs without approval prompts.\n" +
			"- Decline an action only when the runtime refuses it.")
	case tools.LevelSupervised:
		b.WriteString("- Do not run destructive commands without asking, and never work around approvals.\n" +
			"- Some tool calls wait for the user's approval; the runtime asks, so just make the call.\n" +
			"- Do not refuse in advance: try the action and let the policy decide.")
	default:
		b.WriteString("- Do not run destructive commands without asking, and never work around approvals.\n" +
			"- This agent is read-only: calls that change anything are refused by the runtime.")
	}
	return b.String()
}

func runtimeSection(model string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("## Runtime\n\nHost: %s | OS: %s | Model: %s", host, runtime.GOOS, model)
}

// modelOf returns the model name configured for provider reference ref ("<family>.<alias>").
func modelOf(cfg *config.Config, ref string) string {
	family, alias, _ := strings.Cut(ref, ".")
	if m := cfg.Providers.Models[family][alias].Model; m != "" {
		return m
	}
	return family
}

// offeredTools returns the tools a turn with env and prof's policy offers the model.
func offeredTools(prof agent.Profile, env tools.Env) []tools.Spec {
	return prof.Policy.Offered(tools.SpecsFor(env))
}
