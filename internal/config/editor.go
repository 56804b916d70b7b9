package config

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The surgical editor changes a config file's text one key at a time. It never re-serializes the document:
// a set replaces only the bytes of the value, an insert adds one line (and a table header when the table
// does not exist yet), a delete removes the key's line(s). Every result is re-parsed before it is returned.

// setText sets path to the TOML literal lit in raw.
func setText(file string, raw []byte, path Path, lit string) ([]byte, error) {
	d, err := parseDocument(file, raw)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: empty path", ErrNotEditable)
	}
	var out []byte
	if l, ok := d.find(path); ok {
		if l.arrayTable {
			return nil, fmt.Errorf("%w: %s is inside an array table", ErrNotEditable, path)
		}
		out = splice(raw, l.valStart, l.valEnd, lit)
	} else {
		if err := d.checkInsertable(path); err != nil {
			return nil, err
		}
		parent, key := path[:len(path)-1], path[len(path)-1]
		out, err = d.insert(parent, formatKey(Path{key})+" = "+lit+"\n")
		if err != nil {
			return nil, err
		}
	}
	if _, err := parseDocument(file, out); err != nil {
		return nil, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, path, err)
	}
	return out, nil
}

// deleteText removes the line(s) of the key at path; found is false when the file does not set it.
func deleteText(file string, raw []byte, path Path) ([]byte, bool, error) {
	d, err := parseDocument(file, raw)
	if err != nil {
		return nil, false, err
	}
	l, ok := d.find(path)
	if !ok {
		for _, x := range d.leaves {
			if x.path.HasPrefix(path) {
				return nil, false, fmt.Errorf("%w: %s is a table; delete its keys one by one", ErrNotEditable, path)
			}
		}
		return raw, false, nil
	}
	if l.inline || l.arrayTable {
		return nil, false, fmt.Errorf("%w: %s is inside an inline or array table", ErrNotEditable, path)
	}
	out := splice(raw, l.exprStart, l.exprEnd, "")
	if _, err := parseDocument(file, out); err != nil {
		return nil, false, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, path, err)
	}
	return out, true, nil
}

// ensureTable makes sure the table at path exists in the text (adding an empty [path] header if nothing
// defines it), so that a map entry survives its last key being removed or never being written.
func ensureTable(file string, raw []byte, path Path) ([]byte, error) {
	d, err := parseDocument(file, raw)
	if err != nil {
		return nil, err
	}
	for _, t := range slices.Concat(d.tables, d.emptyInline) {
		if t.path.HasPrefix(path) {
			return raw, nil
		}
	}
	for _, l := range d.leaves {
		if l.path.HasPrefix(path) {
			return raw, nil
		}
	}
	if err := d.checkInsertable(path); err != nil {
		return nil, err
	}
	out, err := d.insert(path, "")
	if err != nil {
		return nil, err
	}
	if _, err := parseDocument(file, out); err != nil {
		return nil, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, path, err)
	}
	return out, nil
}

func (d *document) find(path Path) (leaf, bool) {
	for _, l := range d.leaves {
		if slices.Equal(l.path, path) {
			return l, true
		}
	}
	return leaf{}, false
}

// checkInsertable refuses inserting at path when a value (or an inline table) already occupies a prefix of it,
// or when path is itself a table.
func (d *document) checkInsertable(path Path) error {
	for _, l := range d.leaves {
		if path.HasPrefix(l.path) {
			return fmt.Errorf("%w: %s is set as a value", ErrNotEditable, l.path)
		}
		if l.path.HasPrefix(path) && len(l.path) > len(path) {
			return fmt.Errorf("%w: %s is a table", ErrNotEditable, path)
		}
		if l.inline && path.HasPrefix(l.inlineRoot) {
			return fmt.Errorf("%w: %s is an inline table; edit it by hand", ErrNotEditable, l.inlineRoot)
		}
	}
	for _, t := range d.tables {
		if t.array && path.HasPrefix(t.path) {
			return fmt.Errorf("%w: %s is inside an array table", ErrNotEditable, path)
		}
	}
	return nil
}

// insert adds line (a "key = value\n" relative to parent, or "" for just the table) to the table parent.
func (d *document) insert(parent Path, line string) ([]byte, error) {
	eol := d.eol()
	line = strings.ReplaceAll(line, "\n", eol)
	// 1. An explicit [parent] header: append to its body.
	for i := len(d.tables) - 1; i >= 0; i-- {
		t := d.tables[i]
		if !t.array && slices.Equal(t.path, parent) {
			return insertAt(d.raw, t.bodyEnd, line, eol), nil
		}
	}
	// 2. The root table: after its last key.
	if len(parent) == 0 {
		return insertAt(d.raw, d.rootBodyEnd(), line, eol), nil
	}
	// 3. Parent defined by dotted keys in some section: add a dotted key after the last of them.
	last, section := -1, Path(nil)
	for _, l := range d.leaves {
		if l.inline || l.arrayTable || !l.path.HasPrefix(parent) {
			continue
		}
		var sp Path
		if l.section >= 0 {
			sp = d.tables[l.section].path
		}
		if len(sp) < len(parent) && l.exprEnd > last {
			last, section = l.exprEnd, sp
		}
	}
	if last >= 0 {
		if line == "" {
			return d.raw, nil
		}
		return insertAt(d.raw, last, formatKey(parent[len(section):])+"."+line, eol), nil
	}
	// 4. A new [parent] header, after the section sharing the longest prefix with it (else at the end).
	at, best := len(d.raw), 0
	for i, t := range d.tables {
		n := commonPrefix(t.path, parent)
		if n > 0 && n >= best {
			best = n
			at = d.tables[i].bodyEnd
			// keep sub-tables of that section together with it
			for j := i + 1; j < len(d.tables) && d.tables[j].path.HasPrefix(t.path); j++ {
				at = d.tables[j].bodyEnd
			}
		}
	}
	header := "[" + formatKey(parent) + "]" + eol
	text := header + line
	if at > 0 {
		text = eol + text
	}
	if at == len(d.raw) && at > 0 && d.raw[at-1] != '\n' {
		text = eol + text
	}
	return splice(d.raw, at, at, text), nil
}

// eol is the file's line ending (that of its first line), so that inserted lines match the rest of the file.
func (d *document) eol() string {
	if i := bytes.IndexByte(d.raw, '\n'); i > 0 && d.raw[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func commonPrefix(a, b Path) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func insertAt(raw []byte, at int, line, eol string) []byte {
	if line == "" {
		return raw
	}
	if at > 0 && raw[at-1] != '\n' {
		line = eol + line
	}
	return splice(raw, at, at, line)
}

func splice(raw []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(raw)-(to-from)+len(text))
	out = append(out, raw[:from]...)
	out = append(out, text...)
	return append(out, raw[to:]...)
}

// formatKey writes a dotted TOML key, quoting segments that are not bare keys.
func formatKey(p Path) string {
	parts := make([]string, len(p))
	for i, seg := range p {
		if isBareKey(seg) {
			parts[i] = seg
		} else {
			parts[i] = quoteString(seg)
		}
	}
	return strings.Join(parts, ".")
}

func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// quoteString writes a TOML basic string.
func quoteString(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// literal formats a schema leaf value as TOML.
func literal(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return `""`
		}
		return literal(v.Elem())
	case reflect.String:
		return quoteString(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = literal(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return quoteString(fmt.Sprint(v.Interface()))
}
