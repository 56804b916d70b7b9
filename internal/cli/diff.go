package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// secretLine matches a TOML line whose value is a secret (an API key, a token, a password, a URL that may
// carry one), so a diff never shows it.
var secretLine = regexp.MustCompile(`^(\s*"?(?:api_key|token|bot_token|secret|password|db_url|app_token|access_token)"?\s*=\s*).*$`)

// maskSecret replaces a secret line's value.
func maskSecret(line string) string { return secretLine.ReplaceAllString(line, `${1}"********"`) }

// writeDiff prints a line diff of before and after: changed lines as -/+, with ctx lines of context around
// each change and "@@" between distant hunks. Secret values are masked.
func writeDiff(w io.Writer, before, after []byte, ctx int) {
	a, b := splitLines(before), splitLines(after)
	ops := diffLines(a, b)
	show := make([]bool, len(ops))
	for i, op := range ops {
		if op.kind != ' ' {
			for j := max(0, i-ctx); j <= min(len(ops)-1, i+ctx); j++ {
				show[j] = true
			}
		}
	}
	gap := false
	for i, op := range ops {
		if !show[i] {
			gap = true
			continue
		}
		if gap {
			fmt.Fprintln(w, "@@")
			gap = false
		}
		fmt.Fprintf(w, "%c %s\n", op.kind, maskSecret(op.line))
	}
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// diffLines is the longest-common-subsequence line diff; past 4M cells (files far larger than a config) it
// shows the old file removed and the new one added.
func diffLines(a, b []string) []diffOp {
	var out []diffOp
	if len(a)*len(b) > 4<<20 {
		for _, l := range a {
			out = append(out, diffOp{'-', l})
		}
		for _, l := range b {
			out = append(out, diffOp{'+', l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffOp{'-', a[i]})
			i++
		default:
			out = append(out, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, diffOp{'-', a[i]})
	}
	for ; j < len(b); j++ {
		out = append(out, diffOp{'+', b[j]})
	}
	return out
}
