package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const sessionsSynopsis = "list [--query Q] [--limit N] [--json] | show ID|PREFIX [--limit N] [--json] | delete ID|PREFIX"

func runSessions(ctx context.Context, env Env, args []string) error {
	return group{name: "sessions", synopsis: sessionsSynopsis, subs: []subcommand{
		sub("list", sessionsList), sub("show", sessionsShow), sub("delete", sessionsDelete),
	}}.run(ctx, env, args)
}

func sessionsList(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sessions list", "[--config-dir DIR] [--query Q] [--limit N] [--json]")
	query := fs.String("query", "", "only sessions whose messages match this full-text query")
	limit := fs.Int("limit", 0, "at most this many sessions (default: all)")
	asJSON := fs.Bool("json", false, "print the sessions as JSON (each with its title)")
	c, err := fs.connect(ctx, env, args, connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := listSessions(ctx, c, *query, *limit)
	if err != nil {
		return callError("sessions list", err, nil)
	}
	rows := make([]sessionRow, len(res.Sessions))
	for i, s := range res.Sessions {
		rows[i] = sessionRow{SessionSummary: s, Title: sessionTitle(ctx, c, s)}
	}
	if *asJSON {
		return printJSON(env, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-sessions-empty"))
		return nil
	}
	tw := newTable(env, env.Stdout, "ID", "AGENT", "MESSAGES", "LAST ACTIVITY", "STATE", "TITLE")
	for _, s := range rows {
		agent := s.AgentAlias
		if agent == "" {
			agent = "-"
		}
		tw.Row(s.SessionID, visible.Escape(agent), strconv.Itoa(s.MessageCount), localTime(s.LastActivity), s.State, visible.Escape(s.Title))
	}
	return tw.Flush()
}

// sessionRow is a listed session with its title.
type sessionRow struct {
	api.SessionSummary
	Title string `json:"title"`
}

// titleRunes bounds a title taken from the first message.
const titleRunes = 50

// sessionTitle is the session's name, else the first line of its first message, cut to titleRunes.
func sessionTitle(ctx context.Context, c *client.Conn, s api.SessionSummary) string {
	if s.Name != "" {
		return s.Name
	}
	var page api.SessionMessagesResult
	first := 1
	if s.MessageCount == 0 || c.Call(ctx, api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: s.SessionID, BeforeIndex: &first, Limit: 1}, &page) != nil ||
		len(page.Messages) == 0 {
		return ""
	}
	t := strings.TrimSpace(page.Messages[0].Content)
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i] + " …"
	}
	if r := []rune(t); len(r) > titleRunes {
		t = string(r[:titleRunes-1]) + "…"
	}
	return t
}

// resolveSession maps a session id, or a unique prefix of one, to the id of a stored session; an unknown id or
// an ambiguous prefix is an error naming what to do.
func resolveSession(ctx context.Context, c *client.Conn, arg string) (string, error) {
	res, err := listSessions(ctx, c, "", 0)
	if err != nil {
		return "", callError("sessions", err, nil)
	}
	var matches []string
	for _, s := range res.Sessions {
		if s.SessionID == arg {
			return arg, nil
		}
		if strings.HasPrefix(s.SessionID, arg) {
			matches = append(matches, s.SessionID)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		// A session the list leaves out (no agent recorded) is still shown by its full id.
		var page api.SessionMessagesResult
		if err := c.Call(ctx, api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: arg, Limit: 1}, &page); err == nil && page.Total > 0 {
			return arg, nil
		}
		return "", hinted(say("cli-sessions-none", "session", fmt.Sprintf("%q", visible.Escape(arg))), "cli-sessions-none-hint")
	}
	const shown = 10
	list := matches[:min(len(matches), shown)]
	if len(matches) > shown {
		return "", hinted(say("cli-sessions-ambiguous-more", "prefix", fmt.Sprintf("%q", visible.Escape(arg)), "count", len(matches),
			"sessions", strings.Join(list, ", "), "more", len(matches)-shown), "cli-sessions-ambiguous-hint")
	}
	return "", hinted(say("cli-sessions-ambiguous", "prefix", fmt.Sprintf("%q", visible.Escape(arg)), "count", len(matches),
		"sessions", strings.Join(list, ", ")), "cli-sessions-ambiguous-hint")
}

func sessionsShow(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sessions show", "ID|PREFIX [--config-dir DIR] [--limit N] [--json]")
	limit := fs.Int("limit", 0, "show only the last N messages (default: the daemon's page size)")
	asJSON := fs.Bool("json", false, "print the messages as JSON, as stored")
	c, arg, err := fs.connectWithID(ctx, env, args, "session id", connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	id, err := resolveSession(ctx, c, arg)
	if err != nil {
		return err
	}
	var res api.SessionMessagesResult
	if err := c.Call(ctx, api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: id, Limit: *limit}, &res); err != nil {
		return callError("sessions show", err, map[int]string{api.CodeSessionNotFound: "zeroclaw sessions list"})
	}
	if *asJSON {
		return printJSON(env, res)
	}
	for _, m := range res.Messages {
		role, text := renderMessage(m)
		fmt.Fprintf(env.Stdout, "[%d] %s: %s\n", m.Index, visible.Escape(role), strings.Join(visible.Lines(text), "\n    "))
	}
	if res.HasOlder {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-sessions-older", "count", res.Start, "total", res.Total))
	}
	return nil
}

// storedTurn is the stored shape of a tool turn (agent/history.go): an assistant message that calls tools, or
// a tool message with one result.
type storedTurn struct {
	Calls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"zeroclaw_tool_calls"`
	Text   string `json:"text"`
	Result *struct {
		Name    string `json:"name"`
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	} `json:"zeroclaw_tool_result"`
}

// argsPreview bounds the arguments shown for a tool call.
const argsPreview = 200

// renderMessage shows a tool turn as text: "assistant: calls memory_store {...}", "tool memory_store: output".
// Anything else is shown as stored.
func renderMessage(m api.SessionMessage) (role, text string) {
	if !strings.HasPrefix(m.Content, `{"zeroclaw_tool_`) {
		return m.Role, m.Content
	}
	var t storedTurn
	if json.Unmarshal([]byte(m.Content), &t) != nil {
		return m.Role, m.Content
	}
	switch {
	case t.Result != nil:
		role = "tool " + t.Result.Name
		if t.Result.IsError {
			role += " (error)"
		}
		return role, t.Result.Content
	case len(t.Calls) > 0:
		var b strings.Builder
		if t.Text != "" {
			b.WriteString(t.Text + "\n")
		}
		for i, c := range t.Calls {
			if i > 0 {
				b.WriteString("\n")
			}
			args := string(c.Arguments)
			if r := []rune(args); len(r) > argsPreview {
				args = string(r[:argsPreview-1]) + "…"
			}
			fmt.Fprintf(&b, "→ %s %s", c.Name, args)
		}
		return m.Role, b.String()
	}
	return m.Role, m.Content
}

func sessionsDelete(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "sessions delete", "ID|PREFIX [--config-dir DIR]")
	c, arg, err := fs.connectWithID(ctx, env, args, "session id", connectOrSpawn)
	if err != nil {
		return err
	}
	defer c.Close()
	id, err := resolveSession(ctx, c, arg)
	if err != nil {
		return err
	}
	var res api.SessionDeleteResult
	if err := c.Call(ctx, api.MethodSessionDelete, api.SessionIDParams{SessionID: id}, &res); err != nil {
		return callError("sessions delete", err, map[int]string{api.CodeSessionNotFound: "zeroclaw sessions list"})
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-sessions-deleted", "id", id))
	return nil
}

// parseWithID parses flags and exactly one positional argument (what names it: "session id", "job id"...), which
// may come before or after the flags.
func parseWithID(fs *flag.FlagSet, args []string, what string) (string, error) {
	helpFirst(fs, args)
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

// listSessions asks session/list for at most limit sessions (0: all), page by page (the daemon answers at most
// api.MaxSessionListLimit rows a call and says has_more).
func listSessions(ctx context.Context, c *client.Conn, query string, limit int) (api.SessionListResult, error) {
	out := api.SessionListResult{Sessions: []api.SessionSummary{}}
	for offset := 0; ; {
		page := api.MaxSessionListLimit
		if limit > 0 {
			page = min(page, limit-len(out.Sessions))
		}
		var res api.SessionListResult
		if err := c.Call(ctx, api.MethodSessionList, api.SessionListParams{Query: query, Limit: page, Offset: offset}, &res); err != nil {
			return api.SessionListResult{}, err
		}
		out.Sessions = append(out.Sessions, res.Sessions...)
		if !res.HasMore || res.NextOffset <= offset || (limit > 0 && len(out.Sessions) >= limit) {
			return out, nil
		}
		offset = res.NextOffset
	}
}
