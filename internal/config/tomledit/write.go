package tomledit

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The writer renders a whole config tree as TOML. It is used only by the schema migration, the one operation
// that rewrites a file rather than editing it: keys keep the order they had in the original file (new keys
// after, by name), and a comment block above a key or table header, or after a value on its line, is written
// again where the same path survives.

// tree is a decoded TOML table.
type tree = map[string]any

func asTree(v any) (tree, bool) {
	t, ok := v.(map[string]any)
	return t, ok
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Render writes root, a decoded TOML tree (schema_version first), as the text of a file that replaces the
// document d (nil: none), keeping d's key order and comments where their paths survive.
func Render(d *Document, root map[string]any) []byte {
	return newTOMLWriter(d).render(root)
}

type tomlWriter struct {
	b        strings.Builder
	preamble []string            // the comment lines opening the file, up to its first blank line
	above    map[string][]string // comment lines above a key or header, by path
	trailing map[string]string   // "# ..." after a value on its line, by path
	rank     map[string]int      // first line of a path in the original file
}

// newTOMLWriter takes the comments and key order of the original document d (nil: none).
func newTOMLWriter(d *Document) *tomlWriter {
	w := &tomlWriter{above: map[string][]string{}, trailing: map[string]string{}, rank: map[string]int{}}
	if d == nil {
		return w
	}
	rankAll := func(p Path, line int) {
		for i := 1; i <= len(p); i++ {
			k := p[:i].String()
			if r, ok := w.rank[k]; !ok || line < r {
				w.rank[k] = line
			}
		}
	}
	// Every expression's first line, with the path a comment above it belongs to.
	starts := map[int]Path{}
	for _, t := range d.Tables {
		rankAll(t.Path, t.Line)
		starts[t.Line] = t.Path
	}
	for _, l := range d.Leaves {
		rankAll(l.Path, l.Line)
		p := l.Path
		if l.Inline {
			p = l.InlineRoot
		}
		line := d.lineOf(l.ExprStart)
		if _, seen := starts[line]; !seen {
			starts[line] = p
		}
		if !l.Inline && !l.ArrayTable {
			rest := strings.TrimSpace(string(d.Raw[l.ValEnd:d.eolAfter(l.ValEnd)]))
			if strings.HasPrefix(rest, "#") {
				w.trailing[l.Path.String()] = rest
			}
		}
	}
	lines := strings.Split(strings.ReplaceAll(string(d.Raw), "\r\n", "\n"), "\n")
	top := 0
	for top < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[top]), "#") {
		top++
	}
	if top < len(lines) && strings.TrimSpace(lines[top]) == "" {
		// A comment block separated from what follows by a blank line belongs to the file, not to a key.
		for _, l := range lines[:top] {
			w.preamble = append(w.preamble, strings.TrimSpace(l))
		}
	}
	for line, p := range starts {
		var block []string
		for i := line - 2; i >= len(w.preamble); i-- {
			t := strings.TrimSpace(lines[i])
			if !strings.HasPrefix(t, "#") {
				break
			}
			block = append([]string{t}, block...)
		}
		if len(block) > 0 {
			w.above[p.String()] = block
		}
	}
	return w
}

// render writes root (schema_version first) and returns the text.
func (w *tomlWriter) render(root tree) []byte {
	w.table(nil, root, false)
	body := strings.TrimLeft(w.b.String(), "\n")
	if len(w.preamble) > 0 {
		body = strings.Join(w.preamble, "\n") + "\n\n" + body
	}
	return []byte(body)
}

func (w *tomlWriter) order(prefix Path, t tree) []string {
	keys := sortedKeys(t)
	rank := func(k string) int {
		if len(prefix) == 0 && k == "schema_version" {
			return -1
		}
		if r, ok := w.rank[append(prefix[:len(prefix):len(prefix)], k).String()]; ok {
			return r
		}
		return math.MaxInt
	}
	sort.SliceStable(keys, func(i, j int) bool { return rank(keys[i]) < rank(keys[j]) })
	return keys
}

func isTableArray(v any) bool {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return false
	}
	for _, e := range a {
		if _, ok := asTree(e); !ok {
			return false
		}
	}
	return true
}

func (w *tomlWriter) comments(p Path) {
	for _, c := range w.above[p.String()] {
		w.b.WriteString(c + "\n")
	}
}

// table writes t at path: a [header] when it has values of its own, is empty or carries a comment (always for
// an array element), its values, then its sub-tables and arrays of tables.
func (w *tomlWriter) table(path Path, t tree, arrayElem bool) {
	keys := w.order(path, t)
	var values, subs []string
	for _, k := range keys {
		if _, ok := asTree(t[k]); ok || isTableArray(t[k]) {
			subs = append(subs, k)
		} else {
			values = append(values, k)
		}
	}
	if arrayElem {
		w.b.WriteString("\n[[" + formatKey(path) + "]]\n")
	} else if len(path) > 0 && (len(values) > 0 || len(subs) == 0 || len(w.above[path.String()]) > 0) {
		w.b.WriteString("\n")
		w.comments(path)
		w.b.WriteString("[" + formatKey(path) + "]\n")
	}
	for _, k := range values {
		p := append(path[:len(path):len(path)], k)
		w.comments(p)
		line := formatKey(Path{k}) + " = " + tomlLiteral(t[k])
		if c := w.trailing[p.String()]; c != "" {
			line += " " + c
		}
		w.b.WriteString(line + "\n")
	}
	for _, k := range subs {
		p := append(path[:len(path):len(path)], k)
		if st, ok := asTree(t[k]); ok {
			w.table(p, st, false)
			continue
		}
		for _, e := range t[k].([]any) {
			et, _ := asTree(e)
			w.table(p, et, true)
		}
	}
}

// tomlLiteral writes a value of a decoded tree: maps inside arrays as inline tables.
func tomlLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlLiteral(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = formatKey(Path{k}) + " = " + tomlLiteral(x[k])
		}
		if len(parts) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case fmt.Stringer: // go-toml's LocalDate, LocalTime, LocalDateTime
		return x.String()
	}
	return Quote(fmt.Sprint(v))
}
