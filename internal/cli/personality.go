package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const personalitySynopsis = "list [--agent A] [--json] | show FILE [--agent A] | edit FILE [--agent A]   (FILE: SOUL.md, IDENTITY.md, USER.md, ...)"

// runPersonality lists, shows and edits an agent's identity files (SOUL.md, USER.md...) through the daemon's
// personality methods (an ephemeral daemon when none runs).
func runPersonality(ctx context.Context, env Env, args []string) error {
	return group{name: "personality", synopsis: personalitySynopsis, subs: []subcommand{
		sub("list", personalityList), sub("show", personalityShow), sub("edit", personalityEdit),
	}}.run(ctx, env, args)
}

// personalityAgent is --agent, else the only enabled agent.
func personalityAgent(ctx context.Context, c *client.Conn, agent string) (string, error) {
	if agent != "" {
		return agent, nil
	}
	return onlyAgent(ctx, c, "personality")
}

// personalityHints: an unknown agent or a file that is not editable.
var personalityHints = map[int]string{api.CodeInvalidParams: "cli-personality-file-hint"}

func personalityList(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "personality list", "[--config-dir DIR] [--agent A] [--json]")
	agent := fs.String("agent", "", "the agent (default: the only enabled agent)")
	asJSON := fs.Bool("json", false, "print the files as JSON")
	c, err := fs.connect(ctx, env, args, connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	alias, err := personalityAgent(ctx, c, *agent)
	if err != nil {
		return err
	}
	var res api.PersonalityListResult
	if err := c.Call(ctx, api.MethodPersonalityList, api.PersonalityListParams{Agent: alias}, &res); err != nil {
		return callError("personality list", err, personalityHints)
	}
	if *asJSON {
		return printJSON(env, res.Files)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tEXISTS\tSIZE")
	for _, f := range res.Files {
		fmt.Fprintf(tw, "%s\t%v\t%d\n", visible.Escape(f.Filename), f.Exists, f.Size)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stderr, env.Locale().T("cli-personality-list-note", "agent", visible.Escape(alias), "max", res.MaxChars))
	return nil
}

// personalityFile is what show and edit start with: FILE [--agent A] parsed, the connection (to close) and the
// file as the daemon has it.
func personalityFile(ctx context.Context, env Env, verb string, args []string) (*client.Conn, string, string, api.PersonalityGetResult, error) {
	var res api.PersonalityGetResult
	fs := newDaemonFlags(env, "personality "+verb, "FILE [--config-dir DIR] [--agent A]")
	agent := fs.String("agent", "", "the agent (default: the only enabled agent)")
	c, file, err := fs.connectWithID(ctx, env, args, "file name (SOUL.md, USER.md, ...)", connectOrSpawn)
	if err != nil {
		return nil, "", "", res, err
	}
	alias, err := personalityAgent(ctx, c, *agent)
	if err == nil {
		err = c.Call(ctx, api.MethodPersonalityGet, api.PersonalityGetParams{Agent: alias, Filename: file}, &res)
		if err != nil {
			err = callError("personality "+verb, err, personalityHints)
		}
	}
	if err != nil {
		c.Close()
		return nil, "", "", res, err
	}
	return c, alias, file, res, nil
}

func personalityShow(ctx context.Context, env Env, args []string) error {
	c, alias, file, res, err := personalityFile(ctx, env, "show", args)
	if err != nil {
		return err
	}
	defer c.Close()
	if !res.Exists || res.Content == nil {
		return hint.With(say("cli-personality-missing", "agent", visible.Escape(alias), "file", visible.Escape(file)),
			"zeroclaw personality edit "+file+" --agent "+alias)
	}
	fmt.Fprint(env.Stdout, strings.Join(visible.Lines(strings.TrimSuffix(*res.Content, "\n")), "\n")+"\n")
	if res.Truncated {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-personality-truncated"))
	}
	return nil
}

func personalityEdit(ctx context.Context, env Env, args []string) error {
	c, alias, file, cur, err := personalityFile(ctx, env, "edit", args)
	if err != nil {
		return err
	}
	defer c.Close()
	text := ""
	if cur.Content != nil {
		text = *cur.Content
	}
	edited, err := editText(ctx, env, file, text)
	if errors.Is(err, errUnchanged) {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-edit-unchanged"))
		return nil
	}
	if err != nil {
		return err
	}
	var res api.PersonalityPutResult
	if err := c.Call(ctx, api.MethodPersonalityPut, api.PersonalityPutParams{Agent: alias, Filename: file, Content: edited}, &res); err != nil {
		return callError("personality edit", err, personalityHints)
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-personality-wrote", "file", visible.Escape(file), "agent", visible.Escape(alias), "bytes", res.BytesWritten))
	return nil
}
