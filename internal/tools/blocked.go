package tools

import (
	"path"
	"path/filepath"
	"strings"
	"unicode"
)

// DefaultBlockedCommands are the destructive shell patterns refused at every level when a Policy leaves
// BlockedCommands nil. See Policy.BlockedCommands for the pattern syntax.
var DefaultBlockedCommands = []string{
	"rm -rf /", "rm -Rf /", `rm -rf /\*`, `rm -Rf /\*`, "rm -rf ~", "rm -Rf ~", "rm -rf ~/", `rm -rf ~/\*`,
	"rm -rf $HOME", `rm -rf $HOME/\*`,
	"rm --no-preserve-root",
	"mkfs*", "wipefs*", "dd of=/dev/*", "shred /dev/*",
	":(){ :|:& };:",
	"shutdown*", "reboot*", "halt", "poweroff", "init 0", "init 6", "telinit 0", "telinit 6",
	"systemctl poweroff", "systemctl reboot", "systemctl halt",
	"chmod -R 777 /", "chown -R * /",
}

// blockedBy returns the first pattern of patterns that command matches.
//
// The command is split into simple commands at ; & | newlines parentheses braces and backquotes (quotes
// are not honoured, which can only add matches). Each simple command is split into words with quote
// characters removed; combined short flags are expanded ("-rf" is "-r" "-f"). A word pattern is a
// path.Match glob. A pattern matches a simple command when its first word matches the program word (or its
// base name) and each further pattern word matches some word after it, in any order. The program word is the
// first word, or any word reached by skipping wrappers (sudo, env, nohup, sh -c, ...), their flags and
// flag values, and VAR=value assignments. A pattern that starts with a punctuation character (a fork bomb)
// matches literally, ignoring whitespace, anywhere in the command.
func blockedBy(patterns []string, command string) (string, bool) {
	command = strings.ReplaceAll(command, "${HOME}", "$HOME") // before braces split the command
	squeezed := stripSpace(command)
	segments := splitSimpleCommands(command)
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if r := []rune(p)[0]; !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("/._~$-", r) {
			if strings.Contains(squeezed, stripSpace(p)) {
				return p, true
			}
			continue
		}
		pw := expandFlags(strings.Fields(p))
		for _, seg := range segments {
			if matchSegment(pw, seg) {
				return p, true
			}
		}
	}
	return "", false
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func splitSimpleCommands(command string) [][]string {
	parts := strings.FieldsFunc(command, func(r rune) bool {
		return strings.ContainsRune(";&|\n\r()`{}", r)
	})
	var out [][]string
	for _, part := range parts {
		var words []string
		for _, w := range strings.Fields(part) {
			w = strings.Map(func(r rune) rune {
				if r == '\'' || r == '"' || r == '\\' {
					return -1
				}
				return r
			}, w)
			if w != "" {
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			out = append(out, expandFlags(words))
		}
	}
	return out
}

// expandFlags splits combined short flags ("-rf" -> "-r", "-f") so flag order and grouping do not matter.
func expandFlags(words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if len(w) > 2 && w[0] == '-' && w[1] != '-' && isLetters(w[1:]) {
			for _, r := range w[1:] {
				out = append(out, normalizeWord("-"+string(r)))
			}
			continue
		}
		out = append(out, normalizeWord(w))
	}
	return out
}

// flagAliases maps spellings that mean the same to one form, applied to patterns and commands alike, so
// "rm --recursive --force /" matches "rm -rf /" and "chown -R" matches "chown -r".
var flagAliases = map[string]string{"--recursive": "-r", "-R": "-r", "--force": "-f"}

// normalizeWord folds flag aliases and cleans absolute and home-relative paths
// ("//", "/.", "/tmp/..", "~/" and "$HOME/" name the same directories as "/", "~" and "$HOME").
func normalizeWord(w string) string {
	if a, ok := flagAliases[w]; ok {
		return a
	}
	switch {
	case strings.HasPrefix(w, "/"), strings.HasPrefix(w, "~/"), strings.HasPrefix(w, "$HOME/"):
		return path.Clean(w)
	}
	return w
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// wrappers run their arguments as a command; the word after them (and their flags) may be the real program.
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "nice": true, "ionice": true, "time": true,
	"timeout": true, "exec": true, "command": true, "builtin": true, "xargs": true, "busybox": true,
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true, "eval": true,
	"chroot": true, "setsid": true, "stdbuf": true, "watch": true, "then": true, "do": true, "else": true,
	"!": true,
}

func matchSegment(pattern, words []string) bool {
	for _, i := range programs(words) {
		if matchProgram(pattern[0], words[i]) && matchArgs(pattern[1:], words[i+1:]) {
			return true
		}
	}
	return false
}

// programs returns the indexes of the words of a simple command that may be the program it runs: the first
// word, and every word reached by skipping wrappers, their flags and flag values, and VAR=value assignments.
func programs(words []string) []int {
	var out []int
	afterWrapper := false
	for i, w := range words {
		out = append(out, i)
		// Can the program still be further right?
		switch {
		case wrappers[filepath.Base(w)]:
			afterWrapper = true
		case isAssignment(w):
		case afterWrapper && (strings.HasPrefix(w, "-") || isNumber(w)):
		case afterWrapper && i > 0 && strings.HasPrefix(words[i-1], "-"): // a flag's value: sudo -u root rm
		default:
			return out
		}
	}
	return out
}

func matchProgram(pattern, word string) bool {
	return matchWord(pattern, word) || matchWord(pattern, path.Base(word))
}

func matchArgs(pattern, args []string) bool {
	for _, p := range pattern {
		found := false
		for _, a := range args {
			if matchWord(p, a) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func matchWord(pattern, word string) bool {
	ok, err := path.Match(pattern, word)
	return (err == nil && ok) || pattern == word
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	return i > 0 && !strings.ContainsAny(w[:i], "/-")
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsDigit(r) && r != '.' && r != 's' && r != 'm' {
			return false
		}
	}
	return true
}
