package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Styles and widths: colour only on a terminal and never with NO_COLOR (https://no-color.org) or TERM=dumb;
// tables fit COLUMNS, else the terminal's width, else they are not cut (a pipe gets whole lines).

// terminalFile returns w's file when w is a terminal.
func terminalFile(w io.Writer) (*os.File, bool) {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return nil, false
	}
	fi, err := f.Stat()
	return f, err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// colour reports whether styles may be written to w.
func (e Env) colour(w io.Writer) bool {
	if e.Getenv("NO_COLOR") != "" || e.Getenv("TERM") == "dumb" {
		return false
	}
	if e.Getenv("ZEROCLAW_FORCE_COLOR") != "" { // for tests and pagers that keep escapes (less -R)
		return true
	}
	_, tty := terminalFile(w)
	return tty
}

// width is the number of columns output to w may use; 0 means unbounded.
func (e Env) width(w io.Writer) int {
	if n, err := strconv.Atoi(e.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, tty := terminalFile(w); tty {
		return terminalWidth(f)
	}
	return 0
}

// style wraps s in an SGR sequence when on is set ("1" bold, "31" red, "33" yellow, "32" green, "2" dim).
func style(on bool, sgr, s string) string {
	if !on || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// table lays rows out in columns two spaces apart, the header bold on a terminal. When the table is wider
// than its width, the widest columns are cut (with …) until it fits, none below minColumn.
type table struct {
	w      io.Writer
	width  int
	colour bool
	header []string
	rows   [][]string
}

const minColumn = 8

func newTable(env Env, w io.Writer, header ...string) *table {
	return &table{w: w, width: env.width(w), colour: env.colour(w), header: header}
}

// Row adds a row; cells are shown as given (escape them first).
func (t *table) Row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) Flush() error {
	n := len(t.header)
	widths := make([]int, n)
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i := 0; i < n && i < len(r); i++ {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	if t.width > 0 {
		total := func() int {
			s := 2 * (n - 1)
			for _, w := range widths {
				s += w
			}
			return s
		}
		for total() > t.width {
			wi := 0
			for i, w := range widths {
				if w > widths[wi] {
					wi = i
				}
			}
			if widths[wi] <= minColumn {
				break
			}
			widths[wi] = max(minColumn, widths[wi]-(total()-t.width))
		}
	}
	var b strings.Builder
	line := func(r []string, header bool) {
		for i := 0; i < n; i++ {
			cell := ""
			if i < len(r) {
				cell = cut(r[i], widths[i])
			}
			pad := widths[i] - utf8.RuneCountInString(cell)
			if header {
				cell = style(t.colour, "1", cell)
			}
			b.WriteString(cell)
			if i < n-1 {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		b.WriteString("\n")
	}
	line(t.header, true)
	for _, r := range t.rows {
		line(r, false)
	}
	_, err := fmt.Fprint(t.w, b.String())
	return err
}

// cut shortens s to n runes, the last one an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
