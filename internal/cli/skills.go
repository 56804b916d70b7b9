package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const skillsSynopsis = "list [--bundle B] [--agent A] [--json] | show NAME [--bundle B] [--agent A] [--json] | edit NAME [--bundle B] [--agent A]"

// runSkills lists, shows and edits skills through the daemon's skills methods (an ephemeral daemon when none
// runs). A workspace skill (bundle "workspace") is the agent's own file, read and edited in place.
func runSkills(ctx context.Context, env Env, args []string) error {
	return group{name: "skills", synopsis: skillsSynopsis, subs: []subcommand{
		sub("list", skillsList), sub("show", skillsShow), sub("edit", skillsEdit),
	}}.run(ctx, env, args)
}

func skillsList(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "skills list", "[--config-dir DIR] [--bundle B] [--agent A] [--json]")
	bundle := fs.String("bundle", "", `only this bundle ("workspace": the agents' own skills)`)
	agent := fs.String("agent", "", "only this agent's workspace skills (bundles are listed too)")
	asJSON := fs.Bool("json", false, "print the skills as JSON")
	c, err := fs.connect(ctx, env, args, connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	var res api.SkillsListResult
	if err := c.Call(ctx, api.MethodSkillsList, api.SkillsListParams{Bundle: *bundle, Agent: *agent}, &res); err != nil {
		return callError("skills list", err, map[int]string{api.CodeInvalidParams: "zeroclaw config list skill_bundles"})
	}
	if *asJSON {
		return printJSON(env, res.Skills)
	}
	if len(res.Skills) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-skills-empty"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBUNDLE\tAGENT\tDESCRIPTION")
	for _, s := range res.Skills {
		var fm skills.Frontmatter
		_ = json.Unmarshal(s.Frontmatter, &fm)
		agent := s.Agent
		if agent == "" {
			agent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", visible.Escape(s.Name), visible.Escape(s.Bundle), visible.Escape(agent), visible.Escape(firstLine(fm.Description)))
	}
	return tw.Flush()
}

// findSkill finds the one skill named name (in bundle, for agent, when given) among the listed ones.
func findSkill(ctx context.Context, c *client.Conn, name, bundle, agent string) (api.SkillEntry, error) {
	var res api.SkillsListResult
	if err := c.Call(ctx, api.MethodSkillsList, api.SkillsListParams{Bundle: bundle, Agent: agent}, &res); err != nil {
		return api.SkillEntry{}, callError("skills", err, nil)
	}
	var found []api.SkillEntry
	for _, s := range res.Skills {
		if s.Name == name {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return api.SkillEntry{}, hint.With(say("cli-skills-none", "skill", fmt.Sprintf("%q", visible.Escape(name))), "zeroclaw skills list")
	case 1:
		return found[0], nil
	}
	var where []string
	for _, s := range found {
		w := "--bundle " + s.Bundle
		if s.Agent != "" {
			w += " --agent " + s.Agent
		}
		where = append(where, w)
	}
	return api.SkillEntry{}, hinted(say("cli-skills-ambiguous", "count", len(found), "skill", fmt.Sprintf("%q", visible.Escape(name))),
		"cli-skills-ambiguous-hint", "choices", strings.Join(where, ", or "))
}

func skillsShow(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "skills show", "NAME [--config-dir DIR] [--bundle B] [--agent A] [--json]")
	bundle := fs.String("bundle", "", "the skill's bundle (default: the only skill of that name)")
	agent := fs.String("agent", "", "the agent of a workspace skill")
	asJSON := fs.Bool("json", false, "print the skill as JSON")
	c, name, err := fs.connectWithID(ctx, env, args, "skill name", connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := findSkill(ctx, c, name, *bundle, *agent)
	if err != nil {
		return err
	}
	text, res, err := readSkill(ctx, c, s)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env, res)
	}
	fmt.Fprint(env.Stdout, strings.Join(visible.Lines(strings.TrimSuffix(text, "\n")), "\n")+"\n")
	return nil
}

// readSkill returns a skill's SKILL.md text and its read result.
func readSkill(ctx context.Context, c *client.Conn, s api.SkillEntry) (string, api.SkillsReadResult, error) {
	if s.Bundle == api.WorkspaceBundle {
		raw, err := os.ReadFile(filepath.Join(s.Directory, "SKILL.md"))
		if err != nil {
			return "", api.SkillsReadResult{}, fmt.Errorf("skills: %w", err)
		}
		doc, err := skills.Parse(string(raw))
		if err != nil {
			return "", api.SkillsReadResult{}, fmt.Errorf("skills: %s: %w", filepath.Join(s.Directory, "SKILL.md"), err)
		}
		fm, _ := json.Marshal(doc.Frontmatter)
		return string(raw), api.SkillsReadResult{Bundle: s.Bundle, Name: s.Name, Frontmatter: fm, Body: doc.Body}, nil
	}
	var res api.SkillsReadResult
	if err := c.Call(ctx, api.MethodSkillsRead, api.SkillRefParams{Bundle: s.Bundle, Name: s.Name}, &res); err != nil {
		return "", res, callError("skills show", err, map[int]string{api.CodeInvalidParams: "zeroclaw skills list"})
	}
	var fm skills.Frontmatter
	if err := json.Unmarshal(res.Frontmatter, &fm); err != nil {
		return "", res, fmt.Errorf("skills/read: unexpected frontmatter: %w", err)
	}
	return skills.Serialize(skills.Document{Frontmatter: fm, Body: res.Body, HasFrontmatter: true}), res, nil
}

func skillsEdit(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "skills edit", "NAME [--config-dir DIR] [--bundle B] [--agent A]")
	bundle := fs.String("bundle", "", "the skill's bundle; with a skill not there yet, where to create it")
	agent := fs.String("agent", "", "the agent of a workspace skill")
	c, name, err := fs.connectWithID(ctx, env, args, "skill name", connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := findSkill(ctx, c, name, *bundle, *agent)
	var text string
	switch {
	case err == nil && s.Bundle == api.WorkspaceBundle: // the agent's own file: edited in place
		if err := runEditor(ctx, env, filepath.Join(s.Directory, "SKILL.md")); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-skills-edited", "path", visible.Escape(filepath.Join(s.Directory, "SKILL.md"))))
		return nil
	case err == nil:
		if text, _, err = readSkill(ctx, c, s); err != nil {
			return err
		}
	case *bundle != "" && *bundle != api.WorkspaceBundle && strings.HasPrefix(err.Error(), "skills: no skill"):
		// A new skill of the bundle: start from a template.
		s = api.SkillEntry{Bundle: *bundle, Name: name}
		text = skills.Serialize(skills.Document{Frontmatter: skills.Frontmatter{Name: name, Description: "What this skill does, in one line."},
			Body: "Steps the agent follows.\n", HasFrontmatter: true})
	default:
		return err
	}
	edited, err := editText(ctx, env, name+".md", text)
	if errors.Is(err, errUnchanged) {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-edit-unchanged"))
		return nil
	}
	if err != nil {
		return err
	}
	doc, err := skills.Parse(edited)
	if err != nil {
		return hinted(fmt.Errorf("skills: edit %s: %w", visible.Escape(name), err), "cli-skills-edit-hint", "command", "zeroclaw skills edit "+name)
	}
	fm, _ := json.Marshal(doc.Frontmatter)
	var res api.SkillsWriteResult
	if err := c.Call(ctx, api.MethodSkillsWrite, api.SkillsWriteParams{Bundle: s.Bundle, Name: s.Name, Frontmatter: fm, Body: doc.Body}, &res); err != nil {
		return callError("skills edit", err, nil)
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-skills-wrote", "skill", visible.Escape(s.Name), "bundle", visible.Escape(s.Bundle)))
	return nil
}
