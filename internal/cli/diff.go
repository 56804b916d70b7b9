package cli

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// secretLine matches a TOML line whose value is a secret (an API key, a token, a password, a URL that may
// carry one), so a diff never shows it.
var secretLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\s*"?(?:api_key|token|bot_token|secret|password|db_url|app_token|access_token)"?\s*=\s*).*$`)
})

// maskSecret replaces a secret line's value.
func maskSecret(line string) string { return secretLine().ReplaceAllString(line, `${1}"********"`) }

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

// diffLines is Myers' shortest edit script of a into b, which costs time and memory in proportion to the
// number of changed lines, not the size of the files: a quickstart adds a few dozen lines to a config of any
// length. Past maxDiffCells of bookkeeping it shows the old file removed and the new one added.
func diffLines(a, b []string) []diffOp {
	if ops, ok := myers(a, b); ok {
		return ops
	}
	var out []diffOp
	for _, l := range a {
		out = append(out, diffOp{'-', l})
	}
	for _, l := range b {
		out = append(out, diffOp{'+', l})
	}
	return out
}

// maxDiffCells bounds the ints the edit graph's trace may hold (32 MiB).
const maxDiffCells = 4 << 20

func myers(a, b []string) ([]diffOp, bool) {
	n, m := len(a), len(b)
	width := 2*(n+m) + 2
	off := n + m
	v := make([]int, width)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if (d+1)*width > maxDiffCells {
			return nil, false
		}
		trace = append(trace, slices.Clone(v))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, off), true
			}
		}
	}
	return nil, false
}

// backtrack walks the trace from the end back to the start and returns the ops in order.
func backtrack(trace [][]int, a, b []string, off int) []diffOp {
	var rev []diffOp
	x, y := len(a), len(b)
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			prevK = k + 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, diffOp{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, diffOp{'+', b[y-1]})
			} else {
				rev = append(rev, diffOp{'-', a[x-1]})
			}
			x, y = prevX, prevY
		}
	}
	slices.Reverse(rev)
	return rev
}
