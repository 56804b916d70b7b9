package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

const sessionsSynopsis = "list [--query Q] [--limit N] | show ID [--limit N] | delete ID"

func runSessions(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.Stderr, "Usage: zeroclaw sessions %s\n", sessionsSynopsis)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	switch args[0] {
	case "list":
		return sessionsList(ctx, env, args[1:])
	case "show":
		return sessionsShow(ctx, env, args[1:])
	case "delete":
		return sessionsDelete(ctx, env, args[1:])
	}
	return withHint(fmt.Errorf("sessions: unknown subcommand %q", args[0]), "zeroclaw sessions "+sessionsSynopsis)
}

// sessionsClient connects to the daemon, starting an ephemeral one if none runs so history is readable anyway.
func sessionsClient(ctx context.Context, env Env, configDir string) (*client, error) {
	nc, err := dialOrSpawn(ctx, env, configDir)
	if err != nil {
		return nil, err
	}
	return newClient(ctx, nc, nil, nil)
}

func sessionsList(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "sessions list", "[--config-dir DIR] [--query Q] [--limit N]")
	configDir := configDirFlag(fs)
	query := fs.String("query", "", "only sessions whose messages match this full-text query")
	limit := fs.Int("limit", 0, "at most this many sessions (default: the daemon's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c, err := sessionsClient(ctx, env, *configDir)
	if err != nil {
		return err
	}
	defer c.close()
	var res api.SessionListResult
	if err := c.call(ctx, api.MethodSessionList, api.SessionListParams{Query: *query, Limit: *limit}, &res); err != nil {
		return fmt.Errorf("sessions: list: %w", err)
	}
	if len(res.Sessions) == 0 {
		fmt.Fprintln(env.Stderr, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tMESSAGES\tLAST ACTIVITY\tSTATE")
	for _, s := range res.Sessions {
		agent := s.AgentAlias
		if agent == "" {
			agent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.SessionID, agent, s.MessageCount, localTime(s.LastActivity), s.State)
	}
	return tw.Flush()
}

func sessionsShow(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "sessions show", "ID [--config-dir DIR] [--limit N]")
	configDir := configDirFlag(fs)
	limit := fs.Int("limit", 0, "show only the last N messages (default: the daemon's page size)")
	id, err := parseWithID(fs, args, "session id")
	if err != nil {
		return err
	}
	c, err := sessionsClient(ctx, env, *configDir)
	if err != nil {
		return err
	}
	defer c.close()
	var res api.SessionMessagesResult
	if err := c.call(ctx, api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: id, Limit: *limit}, &res); err != nil {
		return fmt.Errorf("sessions: show %s: %w", id, err)
	}
	for _, m := range res.Messages {
		fmt.Fprintf(env.Stdout, "[%d] %s: %s\n", m.Index, m.Role, strings.ReplaceAll(m.Content, "\n", "\n    "))
	}
	if res.HasOlder {
		fmt.Fprintf(env.Stderr, "(%d older messages not shown; use --limit %d to see them all)\n", res.Start, res.Total)
	}
	return nil
}

func sessionsDelete(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "sessions delete", "ID [--config-dir DIR]")
	configDir := configDirFlag(fs)
	id, err := parseWithID(fs, args, "session id")
	if err != nil {
		return err
	}
	c, err := sessionsClient(ctx, env, *configDir)
	if err != nil {
		return err
	}
	defer c.close()
	var res api.SessionDeleteResult
	if err := c.call(ctx, api.MethodSessionDelete, api.SessionIDParams{SessionID: id}, &res); err != nil {
		return fmt.Errorf("sessions: delete %s: %w", id, err)
	}
	fmt.Fprintf(env.Stdout, "deleted session %s\n", id)
	return nil
}

// parseWithID parses flags and exactly one positional argument (what names it: "session id", "job id"...), which
// may come before or after the flags.
func parseWithID(fs *flag.FlagSet, args []string, what string) (string, error) {
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", errUsage
	}
	rest := fs.Args()
	if id == "" && len(rest) > 0 {
		id, rest = rest[0], rest[1:]
	}
	switch {
	case id == "":
		fmt.Fprintln(fs.Output(), "missing "+what)
	case len(rest) > 0:
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", rest[0])
	default:
		return id, nil
	}
	fs.Usage()
	return "", errUsage
}

// localTime renders an RFC 3339 timestamp in local time to the second; anything else is shown as is.
func localTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
