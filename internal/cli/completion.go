package cli

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
)

// completeCommand is the hidden subcommand the completion scripts call: zeroclaw __complete WORD... prints the
// candidates for the last word (the one being typed, possibly empty), one per line.
const completeCommand = "__complete"

// completionTimeout bounds the daemon calls of one completion: a shell must never hang on a tab.
const completionTimeout = 2 * time.Second

// runCompletion prints the completion script of a shell. Every script asks zeroclaw __complete, so the
// commands, flags and ids it offers are always this binary's and the running daemon's.
func runCompletion(_ context.Context, env Env, args []string) error {
	if len(args) != 1 || isHelpArg(args[0]) {
		loc := env.Locale()
		fmt.Fprintln(env.Stdout, usageLine(loc, "completion", "bash|zsh|fish"))
		fmt.Fprintln(env.Stdout, "  bash: source <(zeroclaw completion bash)")
		fmt.Fprintln(env.Stdout, "  zsh:  source <(zeroclaw completion zsh)   "+loc.T("cli-completion-after-compinit"))
		fmt.Fprintln(env.Stdout, "  fish: zeroclaw completion fish | source")
		if len(args) == 1 {
			return nil
		}
		return errUsage
	}
	script, ok := completionScripts[args[0]]
	if !ok {
		return hint.With(say("cli-completion-unknown-shell", "shell", fmt.Sprintf("%q", args[0])), "zeroclaw completion bash|zsh|fish")
	}
	fmt.Fprint(env.Stdout, script)
	return nil
}

var completionScripts = map[string]string{
	"bash": `# zeroclaw completion for bash: source <(zeroclaw completion bash)
_zeroclaw() {
    # __complete already keeps the candidates of the word being typed; they are read as lines and never
    # expanded (compgen -W would run a $(...) inside one).
    mapfile -t COMPREPLY < <(command zeroclaw __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o default -F _zeroclaw zeroclaw
`,
	"zsh": `#compdef zeroclaw
# zeroclaw completion for zsh: source <(zeroclaw completion zsh), after compinit
_zeroclaw() {
    local -a cands
    cands=("${(@f)$(command zeroclaw __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    compadd -a cands
}
if (( $+functions[compdef] )); then compdef _zeroclaw zeroclaw; fi
`,
	"fish": `# zeroclaw completion for fish: zeroclaw completion fish | source
function __zeroclaw_complete
    set -l tokens (commandline -opc) (commandline -ct)
    command zeroclaw __complete $tokens[2..-1] 2>/dev/null
end
complete -c zeroclaw -f -a '(__zeroclaw_complete)'
`,
}

// runComplete answers one completion request. It never starts a daemon and never fails: what it cannot
// find (no daemon, an unknown command) simply has no candidates.
func runComplete(ctx context.Context, env Env, words []string) error {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	for _, c := range candidates(ctx, env, words[:len(words)-1], cur) {
		if strings.HasPrefix(c, cur) && shellSafe(c) {
			fmt.Fprintln(env.Stdout, c)
		}
	}
	return nil
}

// shellSafe keeps candidates a shell reads back as one plain word once the line is entered: letters, digits
// and - _ . : / @ + = , % ^ only. A session id is chosen by whoever created the session (a paired device, a
// [users] user) and the owner lists them all, so an id holding $( ), a backquote, ; | & < > quotes, globs or
// a leading ~ is not offered: completing it would put a command of theirs on the owner's line.
func shellSafe(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-_.:/@+=,%^", r)
	})
}

func candidates(ctx context.Context, env Env, done []string, cur string) []string {
	if len(done) == 0 {
		out := []string{"help"}
		for _, c := range commands() {
			out = append(out, c.name)
		}
		return out
	}
	cmd := done[0]
	prev := done[len(done)-1]
	switch strings.TrimLeft(prev, "-") {
	case "session", "s":
		if strings.HasPrefix(prev, "-") {
			return daemonIDs(ctx, env, "sessions")
		}
	case "agent", "a":
		if strings.HasPrefix(prev, "-") {
			return daemonIDs(ctx, env, "agents")
		}
	}
	if cmd == "completion" && len(done) == 1 {
		return []string{"bash", "fish", "zsh"}
	}
	if strings.HasPrefix(cur, "-") {
		return flagsOf(ctx, env, positional(done))
	}
	pos := positional(done)
	switch {
	case cmd == "sessions" && len(pos) == 2 && (pos[1] == "show" || pos[1] == "delete"):
		return daemonIDs(ctx, env, "sessions")
	case cmd == "config" && len(pos) == 2 && slices.Contains([]string{"get", "set", "delete", "unset"}, pos[1]):
		return daemonIDs(ctx, env, "config")
	case len(pos) == 1:
		return subcommandsOf(ctx, env, cmd)
	}
	return nil
}

// positional drops the flags (and nothing else: a flag's value is left in, which is harmless here).
func positional(words []string) []string {
	var out []string
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			out = append(out, w)
		}
	}
	return out
}

// helpOf is what "zeroclaw WORDS... -h" prints, run in this process with no input.
func helpOf(ctx context.Context, env Env, words []string) string {
	var out bytes.Buffer
	// In English whatever the user's locale: the help is parsed here ("Usage: zeroclaw ...", "Commands:").
	henv := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Environ: append(slices.Clone(env.Environ), "LC_ALL=C"), Home: env.Home}
	if len(words) == 0 || words[0] == completeCommand || !slices.ContainsFunc(commands(), func(c command) bool { return c.name == words[0] }) {
		return ""
	}
	_ = dispatch(ctx, henv, append(slices.Clone(words), "-h"))
	return out.String()
}

var flagLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s+-{1,2}([a-zA-Z][a-zA-Z0-9-]*)`) })

// flagsOf lists the flags of a command (or of its subcommand), as --name, from its help.
func flagsOf(ctx context.Context, env Env, words []string) []string {
	if len(words) > 2 {
		words = words[:2]
	}
	var out []string
	for _, m := range flagLine().FindAllStringSubmatch(helpOf(ctx, env, words), -1) {
		f := "--" + m[1]
		if len(m[1]) == 1 {
			f = "-" + m[1]
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

var commandLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^  ([a-z][a-z0-9-]*)`) })

// subcommandsOf reads a group's verbs from its synopsis: "Usage: zeroclaw pair code [...] | list | revoke ID",
// or, when the synopsis is "<command> ...", from the "Commands:" list of its help.
func subcommandsOf(ctx context.Context, env Env, cmd string) []string {
	help := helpOf(ctx, env, []string{cmd})
	line, _, _ := strings.Cut(help, "\n")
	rest, ok := strings.CutPrefix(line, "Usage: zeroclaw "+cmd+" ")
	if !ok || flagLine().MatchString(help) { // a command with flags of its own is no group
		return nil
	}
	var out []string
	if strings.HasPrefix(rest, "<command>") { // the verbs are listed under "Commands:" (zeroclaw config)
		_, block, _ := strings.Cut(help, "\nCommands:\n")
		block, _, _ = strings.Cut(block, "\n\n")
		for _, m := range commandLine().FindAllStringSubmatch(block, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		return out
	}
	for _, alt := range strings.Split(rest, " | ") {
		first, _, _ := strings.Cut(strings.TrimSpace(alt), " ")
		for _, v := range strings.Split(first, "|") {
			if v != "" && v[0] >= 'a' && v[0] <= 'z' && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// daemonIDs asks the running daemon (never a new one) for session ids, agent aliases or config properties.
func daemonIDs(ctx context.Context, env Env, what string) []string {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	c, err := connectRunning(ctx, env, "")
	if err != nil {
		return nil
	}
	defer c.Close()
	var out []string
	switch what {
	case "sessions":
		var res api.SessionListResult
		if c.Call(ctx, api.MethodSessionList, map[string]any{}, &res) == nil {
			for _, s := range res.Sessions {
				out = append(out, s.SessionID)
			}
		}
	case "agents":
		var res api.AgentsListResult
		if c.Call(ctx, api.MethodAgentsList, map[string]any{}, &res) == nil {
			for _, a := range res.Agents {
				out = append(out, a.Alias)
			}
		}
	case "config":
		var res api.ConfigListResult
		if c.Call(ctx, api.MethodConfigList, api.ConfigListParams{}, &res) == nil {
			for _, e := range res.Entries {
				out = append(out, e.Path)
			}
		}
	}
	return out
}
