package tomledit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The surgical editor changes a config file's text one key at a time. It never re-serializes the document:
// a set replaces only the bytes of the value, an insert adds one line (and a table header when the table
// does not exist yet), a delete removes the key's line(s). Every result is re-parsed before it is returned.
// An edit it cannot make that way is an error wrapping ErrNotEditable; file only names the file in errors.

// Set sets path to the TOML literal lit in raw.
func Set(file string, raw []byte, path Path, lit string) ([]byte, error) {
	d, err := Parse(file, raw)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: empty path", ErrNotEditable)
	}
	var out []byte
	if l, ok := d.Find(path); ok {
		if l.ArrayTable {
			return nil, fmt.Errorf("%w: %s is inside an array table", ErrNotEditable, path)
		}
		out = Splice(raw, l.ValStart, l.ValEnd, lit)
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
	if _, err := Parse(file, out); err != nil {
		return nil, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, path, err)
	}
	return out, nil
}

// Delete removes the line(s) of the key at path; found is false when the file does not set it.
func Delete(file string, raw []byte, path Path) ([]byte, bool, error) {
	d, err := Parse(file, raw)
	if err != nil {
		return nil, false, err
	}
	l, ok := d.Find(path)
	if !ok {
		for _, x := range d.Leaves {
			if x.Path.HasPrefix(path) {
				return nil, false, fmt.Errorf("%w: %s is a table; delete its keys one by one", ErrNotEditable, path)
			}
		}
		return raw, false, nil
	}
	if l.Inline || l.ArrayTable {
		return nil, false, fmt.Errorf("%w: %s is inside an inline or array table", ErrNotEditable, path)
	}
	out := Splice(raw, l.ExprStart, l.ExprEnd, "")
	if _, err := Parse(file, out); err != nil {
		return nil, false, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, path, err)
	}
	return out, true, nil
}

// EnsureTable makes sure the table at path exists in the text (adding an empty [path] header if nothing
// defines it), so that a map entry survives its last key being removed or never being written.
func EnsureTable(file string, raw []byte, path Path) ([]byte, error) {
	d, err := Parse(file, raw)
	if err != nil {
		return nil, err
	}
	for _, t := range slices.Concat(d.Tables, d.EmptyInline) {
		if t.Path.HasPrefix(path) {
			return raw, nil
		}
	}
	for _, l := range d.Leaves {
		if l.Path.HasPrefix(path) {
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
	if _, err := Parse(file, out); err != nil {
		return nil, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, path, err)
	}
	return out, nil
}

// Find returns the leaf at path, if the file sets it.
func (d *Document) Find(path Path) (Leaf, bool) {
	for _, l := range d.Leaves {
		if slices.Equal(l.Path, path) {
			return l, true
		}
	}
	return Leaf{}, false
}

// checkInsertable refuses inserting at path when a value (or an inline table) already occupies a prefix of it,
// or when path is itself a table.
func (d *Document) checkInsertable(path Path) error {
	for _, l := range d.Leaves {
		if path.HasPrefix(l.Path) {
			return fmt.Errorf("%w: %s is set as a value", ErrNotEditable, l.Path)
		}
		if l.Path.HasPrefix(path) && len(l.Path) > len(path) {
			return fmt.Errorf("%w: %s is a table", ErrNotEditable, path)
		}
		if l.Inline && path.HasPrefix(l.InlineRoot) {
			return fmt.Errorf("%w: %s is an inline table; edit it by hand", ErrNotEditable, l.InlineRoot)
		}
	}
	for _, t := range d.Tables {
		if t.Array && path.HasPrefix(t.Path) {
			return fmt.Errorf("%w: %s is inside an array table", ErrNotEditable, path)
		}
	}
	return nil
}

// insert adds line (a "key = value\n" relative to parent, or "" for just the table) to the table parent.
func (d *Document) insert(parent Path, line string) ([]byte, error) {
	eol := d.eol()
	line = strings.ReplaceAll(line, "\n", eol)
	// 1. An explicit [parent] header: append to its body.
	for i := len(d.Tables) - 1; i >= 0; i-- {
		t := d.Tables[i]
		if !t.Array && slices.Equal(t.Path, parent) {
			return insertAt(d.Raw, t.BodyEnd, line, eol), nil
		}
	}
	// 2. The root table: after its last key.
	if len(parent) == 0 {
		return insertAt(d.Raw, d.rootBodyEnd(), line, eol), nil
	}
	// 3. Parent defined by dotted keys in some section: add a dotted key after the last of them.
	last, section := -1, Path(nil)
	for _, l := range d.Leaves {
		if l.Inline || l.ArrayTable || !l.Path.HasPrefix(parent) {
			continue
		}
		var sp Path
		if l.Section >= 0 {
			sp = d.Tables[l.Section].Path
		}
		if len(sp) < len(parent) && l.ExprEnd > last {
			last, section = l.ExprEnd, sp
		}
	}
	if last >= 0 {
		if line == "" {
			return d.Raw, nil
		}
		return insertAt(d.Raw, last, formatKey(parent[len(section):])+"."+line, eol), nil
	}
	// 4. A new [parent] header, after the section sharing the longest prefix with it (else at the end).
	at, best := len(d.Raw), 0
	for i, t := range d.Tables {
		n := commonPrefix(t.Path, parent)
		if n > 0 && n >= best {
			best = n
			at = d.Tables[i].BodyEnd
			// keep sub-tables of that section together with it
			for j := i + 1; j < len(d.Tables) && d.Tables[j].Path.HasPrefix(t.Path); j++ {
				at = d.Tables[j].BodyEnd
			}
		}
	}
	header := "[" + formatKey(parent) + "]" + eol
	text := header + line
	if at > 0 {
		text = eol + text
	}
	if at == len(d.Raw) && at > 0 && d.Raw[at-1] != '\n' {
		text = eol + text
	}
	return Splice(d.Raw, at, at, text), nil
}

// eol is the file's line ending (that of its first line), so that inserted lines match the rest of the file.
func (d *Document) eol() string {
	if i := bytes.IndexByte(d.Raw, '\n'); i > 0 && d.Raw[i-1] == '\r' {
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
	return Splice(raw, at, at, line)
}

// Splice returns a copy of raw with the bytes from:to replaced by text.
func Splice(raw []byte, from, to int, text string) []byte {
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
			parts[i] = Quote(seg)
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

// Quote writes s as a TOML basic string (invalid UTF-8 becomes U+FFFD).
func Quote(s string) string {
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
