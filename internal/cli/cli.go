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
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// Env is what a command may use from its process: streams, environment and home directory. Tests build their own.
type Env struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Environ []string
	Home    string
}

// Locale returns the CLI's localizer, from LC_ALL, LC_MESSAGES and LANG as POSIX orders them (see i18n.Detect).
func (e Env) Locale() *i18n.Localizer { return i18n.Builtin().For(i18n.Detect(e.Getenv)) }

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
	summary string // the catalogue key of its one-line description
	run     func(ctx context.Context, env Env, args []string) error
}

func commands() []command {
	return []command{
		{"daemon", "cli-daemon-about", runDaemon},
		{"status", "cli-status-about", runStatus},
		{"agent", "cli-agent-about", runAgent},
		{"sessions", "cli-sessions-about", runSessions},
		{"memory", "cli-memory-about", runMemory},
		{"skills", "cli-skills-about", runSkills},
		{"personality", "cli-personality-about", runPersonality},
		{"cron", "cli-cron-about", runCron},
		{"sop", "cli-sop-about", runSop},
		{"pair", "cli-pair-about", runPair},
		{"acp", "cli-acp-about", runACP},
		{"mcp", "cli-mcp-about", runMCP},
		{"quickstart", "cli-quickstart-about", runQuickstart},
		{"heartbeat", "cli-heartbeat-about", runHeartbeat},
		{"onboard", "cli-onboard-about", runOnboard},
		{"config", "cli-config-about", runConfig},
		{"logs", "cli-logs-about", runLogs},
		{"costs", "cli-costs-about", runCosts},
		{"doctor", "cli-doctor-about", runDoctor},
		{"backup", "cli-backup-about", runBackup},
		{"restore", "cli-restore-about", runRestore},
		{"storage", "cli-storage-about", runStorage},
		{"rpc", "cli-rpc-about", runRPC},
		{"stop", "cli-stop-about", runStop},
		{"service", "cli-service-about", runService},
		{"ps", "cli-ps-about", runPs},
		{"models", "cli-models-about", runModels},
		{"completion", "cli-completion-about", runCompletion},
		{"version", "cli-version-about", runVersion},
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
	loc := env.Locale()
	fmt.Fprintln(env.Stderr, loc.T("cli-error-label", "error", shownLines(inWords(err, loc))))
	var he *hint.Error
	if errors.As(err, &he) {
		if h := he.In(loc.Code()); h != "" {
			fmt.Fprintln(env.Stderr, loc.T("cli-try-label", "hint", shownLines(h)))
		}
		if he.Code != 0 {
			return he.Code
		}
	}
	return 1
}

var errUsage = errors.New("usage")

// shownLines is an error's text as the terminal may show it: each line through visible.Sanitize. An error can
// carry what a provider, a daemon or a platform answered (the quickstart's test, a turn's failure), and a
// terminal acts on the control sequences in it (OSC 52 writes the clipboard, ESC [2J clears the screen, a CR
// rewrites the line); the line breaks of a multi-line error stay, and a text already escaped is unchanged.
func shownLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t") // a tab only moves the cursor on: pgx indents its per-host errors with it
		for j, c := range cells {
			cells[j] = visible.Sanitize(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

func dispatch(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 {
		usage(env.Stderr, env.Locale())
		return errUsage
	}
	if args[0] == completeCommand { // hidden: what the completion scripts call
		return runComplete(ctx, env, args[1:])
	}
	if isHelpArg(args[0]) {
		if len(args) > 1 && args[0] == "help" { // zeroclaw help CMD [SUB] is CMD [SUB] -h
			return dispatch(ctx, env, append(slices.Clone(args[1:]), "-h"))
		}
		usage(env.Stdout, env.Locale())
		return nil
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
		names = append(names, c.name)
	}
	loc := env.Locale()
	try := "zeroclaw help"
	if s := suggest(args[0], names); s != "" {
		try = loc.T("cli-did-you-mean-command", "command", s)
	}
	return hint.With(errors.New(loc.T("cli-unknown-command", "command", fmt.Sprintf("%q", args[0]))), try)
}

// isHelpArg reports whether a is a request for help: -h, -help, --help or help.
func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

// groupHelp handles the help of a command with subcommands: no argument prints the synopsis to stderr as a
// usage error; a help argument prints it to stdout and succeeds. done is false when args name a subcommand.
func groupHelp(env Env, group, synopsis string, args []string) (done bool, err error) {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, usageLine(env.Locale(), group, synopsis))
		return true, errUsage
	}
	if isHelpArg(args[0]) {
		fmt.Fprintln(env.Stdout, usageLine(env.Locale(), group, synopsis))
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
	loc := env.Locale()
	try := "zeroclaw " + g.name + " " + cmp.Or(g.hint, g.synopsis)
	if s := suggest(args[0], names); s != "" {
		try = loc.T("cli-did-you-mean-subcommand", "command", "zeroclaw "+g.name+" "+s)
	}
	return hint.With(errors.New(loc.T("cli-unknown-subcommand", "group", g.name, "command", fmt.Sprintf("%q", args[0]))), try)
}

func usage(w io.Writer, loc *i18n.Localizer) {
	fmt.Fprintln(w, loc.T("cli-usage-title"))
	fmt.Fprintln(w)
	fmt.Fprintln(w, loc.T("cli-usage-line"))
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, about(loc, c.summary))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, loc.T("cli-usage-flags"))
}

// about is a command's description: its catalogue key formatted, or the text itself for a command that has
// no key yet.
func about(loc *i18n.Localizer, summary string) string {
	if strings.HasPrefix(summary, "cli-") && !strings.Contains(summary, " ") {
		return loc.T(summary)
	}
	return summary
}

// newFlagSet returns a flag set that reports errors instead of exiting. Its messages go to stderr, except
// the help that -h asks for, which goes to stdout (see helpOutput).
// Each flag's help is looked up in the catalogue (see flagHelpKey) and printed in the CLI's locale.
func newFlagSet(env Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&helpOutput{out: env.Stdout, err: env.Stderr})
	loc := env.Locale()
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usageLine(loc, name, synopsis))
		printDefaults(fs, loc)
	}
	madeFlagSets.note(fs)
	return fs
}

// usageLine is the first line of a command's help: "Usage: zeroclaw NAME SYNOPSIS" in loc's words.
func usageLine(loc *i18n.Localizer, name, synopsis string) string {
	return loc.T("cli-usage", "command", "zeroclaw "+name+" "+synopsis)
}

// printDefaults is fs.PrintDefaults with each flag's help in loc's words: flag.PrintDefaults's layout, the
// catalogue's text (English when a flag has no entry, which the tests do not allow).
func printDefaults(fs *flag.FlagSet, loc *i18n.Localizer) {
	saved := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if key := flagHelpKey(fs.Name(), f.Name); key != "" {
			saved[f.Name] = f.Usage
			f.Usage = loc.T(key)
		}
	})
	fs.PrintDefaults()
	fs.VisitAll(func(f *flag.Flag) {
		if u, ok := saved[f.Name]; ok {
			f.Usage = u
		}
	})
}

// flagHelpKey is the catalogue key of a flag's help: cli-flag-SET-FLAG ("cron add" --tz: cli-flag-cron-add-tz)
// when the catalogue has it, else the shared cli-flags-FLAG (--config-dir, --json: one text for every
// command), else "" (the flag's English usage is printed).
func flagHelpKey(set, name string) string {
	for _, k := range []string{"cli-flag-" + strings.ReplaceAll(set, " ", "-") + "-" + name, "cli-flags-" + name} {
		if _, ok := i18n.Builtin().Entry(i18n.Source, k); ok {
			return k
		}
	}
	return ""
}

// madeFlagSets hands every flag set the CLI makes to a test that walks the commands (nil: nobody listens).
var madeFlagSets flagSetTap

type flagSetTap struct {
	mu sync.Mutex
	fn func(*flag.FlagSet)
}

func (t *flagSetTap) note(fs *flag.FlagSet) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fn != nil {
		t.fn(fs)
	}
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
		return nil, hint.With(say("cli-unknown-log-level", "level", fmt.Sprintf("%q", level)), "--log-level debug|info|warn|error")
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, hint.With(say("cli-unknown-log-format", "format", fmt.Sprintf("%q", format)), "--log-format text|json")
}

// configDirFlag defines the --config-dir flag every command that finds the install takes.
func configDirFlag(fs *flag.FlagSet) *string {
	return fs.String("config-dir", "", "install root (default: $ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw)")
}
