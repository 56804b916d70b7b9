package cli

import (
	"context"
	"flag"
	"net"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/chat"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// historyFile is the chat's line history, under the install's state directory (mode 0600).
const historyFile = "agent_history"

// runAgent chats with an agent through the daemon (an ephemeral one when none runs): one turn with -m, else a
// conversation (see package chat).
func runAgent(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "agent", "[--config-dir DIR] [--agent ALIAS] [-m MSG] [--session ID]")
	configDir := configDirFlag(fs)
	alias := fs.String("agent", "", "agent alias (default: the only configured agent); -a for short")
	fs.StringVar(alias, "a", "", "short for --agent")
	msg := fs.String("m", "", "send this one message, print the answer and exit; --message in full")
	fs.StringVar(msg, "message", "", "the same as -m")
	sessionID := fs.String("session", "", "resume the session with this id (created if it does not exist)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	oneShot := false
	fs.Visit(func(f *flag.Flag) { oneShot = oneShot || f.Name == "m" || f.Name == "message" })
	if oneShot && strings.TrimSpace(*msg) == "" {
		return hint.With(say("cli-agent-blank-message"), `zeroclaw agent -m "hello"`)
	}

	hist := ""
	if layout, err := install.Resolve(*configDir, env.Getenv, env.Home); err == nil {
		hist = filepath.Join(layout.StateDir(), historyFile)
	}
	return chat.Run(ctx, chat.Options{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Alias: *alias,
		SessionID: *sessionID, OneShot: oneShot, Message: *msg, HistoryPath: hist, Locale: env.Locale(),
		Dial: func(ctx context.Context) (net.Conn, error) { return dialOrSpawn(ctx, env, *configDir) }})
}
