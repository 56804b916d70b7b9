package i18n

import (
	"fmt"
	"strconv"
	"strings"
)

// The subset of Fluent read here is the one upstream's catalogues use, plus plural selectors:
//
//	# comment
//	key = text with {$name} and {"{"} literals
//	    continued on indented lines
//	key-plural = { $count ->
//	    [one] {$count} file
//	   *[other] {$count} files
//	}
//
// Terms (-x), attributes (.x) and other selector keys are not used: an entry holding one is an error for that
// entry only, and the rest of the file is read (upstream counts a bad message as missing).

// Entry is one message of a catalogue: a pattern, or a plural selector over Var with one pattern per CLDR
// category (zero, one, two, few, many, other; Other is the default variant).
type Entry struct {
	Key      string
	Pattern  string            // set when Var is empty
	Var      string            // the selector's variable
	Variants map[string]string // category -> pattern
	Line     int               // 1-based line of the key
}

// Vars returns the external variables the entry's patterns refer to, the selector's own included.
func (e Entry) Vars() map[string]bool {
	out := map[string]bool{}
	add := func(p string) {
		for _, s := range mustSegments(p) {
			if s.isVar {
				out[s.text] = true
			}
		}
	}
	if e.Var == "" {
		add(e.Pattern)
		return out
	}
	out[e.Var] = true
	for _, p := range e.Variants {
		add(p)
	}
	return out
}

// ParseError says which entry of a catalogue could not be read and why.
type ParseError struct {
	Line int
	Key  string
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Key, e.Msg)
}

// Parse reads a catalogue. It returns every entry it could read, in file order (a later duplicate replaces
// nothing: the first wins and the second is an error), and one error per entry or line it could not.
func Parse(src string) ([]Entry, []error) {
	src = strings.TrimPrefix(strings.ReplaceAll(src, "\r\n", "\n"), "\ufeff")
	lines := strings.Split(src, "\n")
	var out []Entry
	var errs []error
	seen := map[string]bool{}
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		start := i
		i++
		if line[0] == ' ' || line[0] == '\t' {
			errs = append(errs, &ParseError{Line: start + 1, Msg: "indented line outside a message"})
			continue
		}
		// The value's continuation: following lines that are indented or blank (blank lines inside count
		// only when more indented text follows).
		var cont []string
		for j := i; j < len(lines); j++ {
			l := lines[j]
			if strings.TrimSpace(l) == "" {
				continue
			}
			if l[0] != ' ' && l[0] != '\t' && l[0] != '}' { // a selector may close at column 0
				break
			}
			cont = append(cont, lines[i:j+1]...)
			i = j + 1
		}
		key, first, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validKey(key) {
			if strings.HasPrefix(key, "-") {
				errs = append(errs, &ParseError{Line: start + 1, Key: key, Msg: "terms are not supported"})
			} else {
				errs = append(errs, &ParseError{Line: start + 1, Msg: "expected key = value"})
			}
			continue
		}
		e, err := entry(key, first, cont)
		if err != nil {
			errs = append(errs, &ParseError{Line: start + 1, Key: key, Msg: err.Error()})
			continue
		}
		if seen[key] {
			errs = append(errs, &ParseError{Line: start + 1, Key: key, Msg: "duplicate key"})
			continue
		}
		seen[key] = true
		e.Line = start + 1
		out = append(out, e)
	}
	return out, errs
}

func validKey(k string) bool {
	if k == "" || !isLetter(k[0]) {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// entry builds one message from the text after "=" and its continuation lines, dedented by their common
// indentation as Fluent does.
func entry(key, first string, cont []string) (Entry, error) {
	first = strings.TrimLeft(first, " ")
	indent := -1
	for _, l := range cont {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	parts := []string{}
	if first != "" {
		parts = append(parts, first)
	}
	for _, l := range cont {
		if strings.TrimSpace(l) == "" {
			parts = append(parts, "")
			continue
		}
		parts = append(parts, l[indent:])
	}
	value := strings.TrimRight(strings.Join(parts, "\n"), " \n")
	if value == "" {
		return Entry{}, fmt.Errorf("empty value")
	}
	if strings.HasPrefix(strings.TrimSpace(cont0(cont)), ".") {
		return Entry{}, fmt.Errorf("attributes are not supported")
	}
	if v, variants, ok, err := selector(value); ok || err != nil {
		if err != nil {
			return Entry{}, err
		}
		return Entry{Key: key, Var: v, Variants: variants}, nil
	}
	if _, err := segments(value); err != nil {
		return Entry{}, err
	}
	return Entry{Key: key, Pattern: value}, nil
}

func cont0(c []string) string {
	for _, l := range c {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// pluralCategories are the CLDR plural categories a variant may name.
var pluralCategories = map[string]bool{"zero": true, "one": true, "two": true, "few": true, "many": true, "other": true}

// selector recognises a value that is one plural selector: "{ $var ->" then variant lines, then "}". ok is
// false when the value is not a selector at all.
func selector(value string) (v string, variants map[string]string, ok bool, err error) {
	head, body, found := strings.Cut(value, "\n")
	h := strings.TrimSpace(head)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "->") {
		return "", nil, false, nil
	}
	h = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(h, "{"), "->"))
	if !strings.HasPrefix(h, "$") || !validKey(h[1:]) {
		return "", nil, true, fmt.Errorf("a selector must be on a $variable")
	}
	if !found {
		return "", nil, true, fmt.Errorf("selector without variants")
	}
	v = h[1:]
	variants = map[string]string{}
	def := ""
	rows := strings.Split(body, "\n")
	closed := false
	for _, row := range rows {
		r := strings.TrimSpace(row)
		if r == "" {
			continue
		}
		if closed {
			return "", nil, true, fmt.Errorf("text after the selector")
		}
		if r == "}" {
			closed = true
			continue
		}
		star := strings.HasPrefix(r, "*")
		r = strings.TrimPrefix(r, "*")
		if !strings.HasPrefix(r, "[") {
			return "", nil, true, fmt.Errorf("expected a [variant]")
		}
		name, text, ok := strings.Cut(r[1:], "]")
		name = strings.TrimSpace(name)
		if !ok || !pluralCategories[name] {
			return "", nil, true, fmt.Errorf("variant [%s] is not a plural category", name)
		}
		if _, dup := variants[name]; dup {
			return "", nil, true, fmt.Errorf("duplicate variant [%s]", name)
		}
		text = strings.TrimSpace(text)
		if _, err := segments(text); err != nil {
			return "", nil, true, err
		}
		variants[name] = text
		if star {
			if def != "" {
				return "", nil, true, fmt.Errorf("two default variants")
			}
			def = name
		}
	}
	if !closed {
		return "", nil, true, fmt.Errorf("selector not closed")
	}
	if def == "" {
		return "", nil, true, fmt.Errorf("selector without a *default variant")
	}
	if _, ok := variants["other"]; !ok {
		variants["other"] = variants[def]
	}
	return v, variants, true, nil
}

// segment is a run of literal text or one variable reference.
type segment struct {
	text  string
	isVar bool
}

// segments splits a pattern into text and {$var} references; {"..."} string literals become text. Any other
// placeable, or a brace out of place, is an error.
func segments(p string) ([]segment, error) {
	var out []segment
	var lit strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		if c == '}' {
			return nil, fmt.Errorf("unbalanced }")
		}
		if c != '{' {
			lit.WriteByte(c)
			i++
			continue
		}
		end := placeableEnd(p, i+1)
		if end < 0 {
			return nil, fmt.Errorf("unclosed {")
		}
		inner := strings.TrimSpace(p[i+1 : end])
		switch {
		case strings.HasPrefix(inner, "$") && validKey(inner[1:]):
			if lit.Len() > 0 {
				out = append(out, segment{text: lit.String()})
				lit.Reset()
			}
			out = append(out, segment{text: inner[1:], isVar: true})
		case strings.HasPrefix(inner, `"`):
			s, err := strconv.Unquote(inner)
			if err != nil {
				return nil, fmt.Errorf("bad string literal %s", inner)
			}
			lit.WriteString(s)
		default:
			return nil, fmt.Errorf("unsupported placeable {%s}", inner)
		}
		i = end + 1
	}
	if lit.Len() > 0 {
		out = append(out, segment{text: lit.String()})
	}
	return out, nil
}

// placeableEnd finds the } closing a placeable that starts at i, skipping a quoted string literal.
func placeableEnd(p string, i int) int {
	inStr := false
	for ; i < len(p); i++ {
		switch c := p[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && c == '}':
			return i
		case !inStr && (c == '{' || c == '\n'):
			return -1
		}
	}
	return -1
}

// mustSegments is segments for a pattern Parse already accepted.
func mustSegments(p string) []segment {
	s, _ := segments(p)
	return s
}

// render formats segments with args; a variable args lacks is shown as {$name}, as Fluent does.
func render(segs []segment, args map[string]any) string {
	var b strings.Builder
	for _, s := range segs {
		if !s.isVar {
			b.WriteString(s.text)
			continue
		}
		v, ok := args[s.text]
		if !ok {
			b.WriteString("{$" + s.text + "}")
			continue
		}
		fmt.Fprint(&b, v)
	}
	return b.String()
}
