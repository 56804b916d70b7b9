// Package cli implements the zeroclaw command line: one file per subcommand, each parsing its own flags with the
// standard flag package and returning an error that may carry a hint for the user.
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
)

// Env is what a command may use from its process: streams, environment and home directory. Tests build their own.
type Env struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Environ []string
	Home    string
}

// Getenv looks a variable up in e.Environ (the last assignment wins).
func (e Env) Getenv(key string) string {
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env Env, args []string) error
}

func commands() []command {
	return []command{
		{"daemon", "run the daemon in the foreground", runDaemon},
		{"status", "print the running daemon's status", runStatus},
		{"agent", "chat with an agent (one-shot with -m, else interactive); starts an ephemeral daemon if none runs", runAgent},
		{"sessions", "list, show or delete stored chat sessions", runSessions},
		{"memory", "list, search, show or forget what the agents remember", runMemory},
		{"skills", "list, show or edit the agents' skills (bundles and each workspace's own)", runSkills},
		{"personality", "list, show or edit an agent's identity files (SOUL.md, USER.md, ...)", runPersonality},
		{"cron", "list, add, remove, run or show the runs of scheduled jobs (through the running daemon)", runCron},
		{"sop", "run standard operating procedures, list their runs, approve, deny or cancel them (through the running daemon)", runSop},
		{"pair", "show the gateway pairing code, list or revoke paired devices (through the running daemon)", runPair},
		{"acp", "speak the Agent Client Protocol on stdin/stdout for an editor; starts an ephemeral daemon if none runs", runACP},
		{"mcp", "serve the daemon's memory, sessions, cron and SOPs as MCP tools on stdin/stdout (mcp serve); starts an ephemeral daemon if none runs", runMCP},
		{"quickstart", "set up a working agent in five questions (provider, model, name, risk preset, extras); edits an existing config in place after showing the change", runQuickstart},
		{"onboard", "deprecated: prints how to run zeroclaw quickstart, and writes nothing", runOnboard},
		{"config", "get, set, list, delete or validate configuration properties", runConfig},
		{"logs", "print the daemon's runtime events (-f follows new ones)", runLogs},
		{"costs", "print model spending as a table by day, agent or model", runCosts},
		{"doctor", "check the install (file modes, databases, secrets, config, providers) and say how to fix what is wrong", runDoctor},
		{"backup", "write a consistent archive of the install (FILE.tar.gz), even while the daemon runs", runBackup},
		{"restore", "verify an archive, then restore it as the install (--force keeps the old one aside)", runRestore},
		{"rpc", "send NDJSON requests from stdin to the daemon and print every reply (a socat replacement)", runRPC},
		{"stop", "ask the running daemon to shut down", runStop},
		{"service", "install, uninstall, start, stop or show the daemon as a user service (systemd, launchd)", runService},
		{"version", "print the version", runVersion},
	}
}

// Run executes the command line args (without the program name) and returns the process exit code.
func Run(ctx context.Context, env Env, args []string) int {
	err := dispatch(ctx, env, args)
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, errUsage) {
		return 2
	}
	fmt.Fprintf(env.Stderr, "Error: %v\n", err)
	var he *hint.Error
	if errors.As(err, &he) {
		if he.Hint != "" {
			fmt.Fprintf(env.Stderr, "Try: %s\n", he.Hint)
		}
		if he.Code != 0 {
			return he.Code
		}
	}
	return 1
}

var errUsage = errors.New("usage")

func dispatch(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 {
		usage(env.Stderr)
		return errUsage
	}
	if isHelpArg(args[0]) {
		if len(args) > 1 && args[0] == "help" { // zeroclaw help CMD [SUB] is CMD [SUB] -h
			return dispatch(ctx, env, append(slices.Clone(args[1:]), "-h"))
		}
		usage(env.Stdout)
		return nil
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
		names = append(names, c.name)
	}
	try := "zeroclaw help"
	if s := suggest(args[0], names); s != "" {
		try = "did you mean " + s + "? (zeroclaw help lists the commands)"
	}
	return hint.With(fmt.Errorf("unknown command %q", args[0]), try)
}

// isHelpArg reports whether a is a request for help: -h, -help, --help or help.
func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

// groupHelp handles the help of a command with subcommands: no argument prints the synopsis to stderr as a
// usage error; a help argument prints it to stdout and succeeds. done is false when args name a subcommand.
func groupHelp(env Env, group, synopsis string, args []string) (done bool, err error) {
	if len(args) == 0 {
		fmt.Fprintf(env.Stderr, "Usage: zeroclaw %s %s\n", group, synopsis)
		return true, errUsage
	}
	if isHelpArg(args[0]) {
		fmt.Fprintf(env.Stdout, "Usage: zeroclaw %s %s\n", group, synopsis)
		return true, nil
	}
	return false, nil
}

// group is a command with subcommands (zeroclaw pair code|list|revoke): one table from verb to handler, so
// that every group answers help, a missing verb and an unknown one the same way.
type group struct {
	name     string
	synopsis string
	// hint is what the error of an unknown subcommand suggests after "zeroclaw NAME " (default: synopsis).
	hint string
	subs []subcommand
}

// subcommand is one verb of a group; names after the first are aliases, left out of did-you-mean.
type subcommand struct {
	names []string
	run   func(ctx context.Context, env Env, args []string) error
}

func sub(name string, run func(context.Context, Env, []string) error, aliases ...string) subcommand {
	return subcommand{names: append([]string{name}, aliases...), run: run}
}

// run dispatches args to the subcommand they name (see groupHelp for none or help); an unknown verb is an
// error with a did-you-mean when one is close.
func (g group) run(ctx context.Context, env Env, args []string) error {
	if done, err := groupHelp(env, g.name, g.synopsis, args); done {
		return err
	}
	names := make([]string, 0, len(g.subs))
	for _, s := range g.subs {
		if slices.Contains(s.names, args[0]) {
			return s.run(ctx, env, args[1:])
		}
		names = append(names, s.names[0])
	}
	try := "zeroclaw " + g.name + " " + cmp.Or(g.hint, g.synopsis)
	if s := suggest(args[0], names); s != "" {
		try = "did you mean zeroclaw " + g.name + " " + s + "?"
	}
	return hint.With(fmt.Errorf("%s: unknown subcommand %q", g.name, args[0]), try)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "zeroclaw: a personal AI agent runtime daemon")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: zeroclaw <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'zeroclaw <command> -h' for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting. Its messages go to stderr, except
// the help that -h asks for, which goes to stdout (see helpOutput).
func newFlagSet(env Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&helpOutput{out: env.Stdout, err: env.Stderr})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: zeroclaw %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// helpOutput is a flag set's output: stderr, or stdout once the arguments asked for help.
type helpOutput struct {
	out, err io.Writer
	help     bool
}

func (h *helpOutput) Write(p []byte) (int, error) {
	if h.help {
		return h.out.Write(p)
	}
	return h.err.Write(p)
}

// helpFirst switches fs's output to stdout when args ask for help (before a "--").
func helpFirst(fs *flag.FlagSet, args []string) {
	ho, ok := fs.Output().(*helpOutput)
	if !ok {
		return
	}
	for _, a := range args {
		if a == "--" {
			return
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			ho.help = true
			return
		}
	}
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	helpFirst(fs, args)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}

// newLogger builds the slog logger the daemon logs with, on stderr.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, hint.With(fmt.Errorf("unknown log level %q", level), "--log-level debug|info|warn|error")
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, hint.With(fmt.Errorf("unknown log format %q", format), "--log-format text|json")
}

// configDirFlag defines the --config-dir flag every command that finds the install takes.
func configDirFlag(fs *flag.FlagSet) *string {
	return fs.String("config-dir", "", "install root (default: $ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw)")
}
