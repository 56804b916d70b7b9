package tools

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// braceExpansion finds a brace expansion ("{rm,-rf,/}", "{a..c}"): braces around a comma or "..", no spaces.
var braceExpansion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[^\s{}]*(,|\.\.)[^\s{}]*\}`) })

// shells run commands from their input or a script file unless given -c; with -c the blocklist sees the text.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true}

// indirection names the first construct of command through which the shell could run something the
// blocklist's patterns never saw, or returns "". It over-reports rather than misses (quotes are not honoured:
// '$x' counts as expansion): the answer only decides whether a person is asked.
//
// Covered: parameter and arithmetic expansion and command substitution ($x, ${x}, $(...), $((...)), $'...'),
// backquotes, brace expansion, eval, exec, source and ".", xargs, a shell reading commands from its input or a
// script (no -c), and a pattern (* ? [) as the program name.
func indirection(command string) string {
	for i := 0; i+1 < len(command); i++ {
		if command[i] == '$' && !strings.ContainsRune(" \t\r\n", rune(command[i+1])) {
			return "variable expansion or command substitution ($)"
		}
	}
	if strings.ContainsRune(command, '`') {
		return "command substitution (backquotes)"
	}
	if braceExpansion().MatchString(command) {
		return "brace expansion ({a,b})"
	}
	for _, words := range splitSimpleCommands(command) {
		for _, i := range programs(words) {
			w := words[i]
			switch base := filepath.Base(w); {
			case base == "eval", base == "exec", base == "xargs":
				return base
			case w == "source", w == ".":
				return "source (.)"
			case shells[base] && !hasWord(words[i+1:], "-c"):
				return "a shell reading commands from its input or a script (no -c)"
			case w != "[" && w != "[[" && strings.ContainsAny(w, "*?["):
				return "a pattern as the program name"
			}
		}
	}
	return ""
}

func hasWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}
