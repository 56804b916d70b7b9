package tomledit

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// Whole map entries (agents.<alias>, providers.models.<family>.<alias>...) are removed and renamed in the text
// the same way single keys are: only the bytes that define the entry change, the rest of the file (comments,
// order, other entries) stays as it was.

// span is a byte range of the file text.
type span struct{ from, to int }

// DeleteEntry removes every definition of the map entry at entry: its table headers with their bodies, dotted
// keys naming it from a parent table, and a `key = {...}` inline table. found is false when the file does not
// define it. An entry defined inside an inline table of a parent (agents = { bot = {...} }) is not editable.
func DeleteEntry(file string, raw []byte, entry Path) ([]byte, bool, error) {
	d, err := Parse(file, raw)
	if err != nil {
		return nil, false, err
	}
	var cut []span
	for _, t := range slices.Concat(d.Tables, d.EmptyInline) {
		if t.Path.HasPrefix(entry) {
			cut = append(cut, span{t.HeaderStart, t.BodyEnd})
		}
	}
	for _, l := range d.Leaves {
		if !l.Path.HasPrefix(entry) || d.inEntrySection(l, entry) {
			continue
		}
		if l.Inline && !l.InlineRoot.HasPrefix(entry) {
			return nil, false, fmt.Errorf("%w: %s is inside the inline table %s; edit it by hand", ErrNotEditable, entry, l.InlineRoot)
		}
		cut = append(cut, span{l.ExprStart, l.ExprEnd})
	}
	if len(cut) == 0 {
		return raw, false, nil
	}
	out := removeSpans(raw, cut)
	if _, err := Parse(file, out); err != nil {
		return nil, false, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, entry, err)
	}
	return out, true, nil
}

// inEntrySection reports whether leaf l sits in a table header at or below entry (removed with that header).
func (d *Document) inEntrySection(l Leaf, entry Path) bool {
	return l.Section >= 0 && d.Tables[l.Section].Path.HasPrefix(entry)
}

// removeSpans cuts the spans (possibly overlapping) out of raw. A cut that leaves two blank lines in a row also
// takes the blank line after it, so removing a section does not leave a growing gap.
func removeSpans(raw []byte, cut []span) []byte {
	slices.SortFunc(cut, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var merged []span
	for _, s := range cut {
		if n := len(merged); n > 0 && s.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	out := raw
	for i := len(merged) - 1; i >= 0; i-- {
		s := merged[i]
		if blankBefore(out, s.from) {
			s.to += blankLineAt(out, s.to)
		}
		out = Splice(out, s.from, s.to, "")
	}
	return out
}

// blankBefore reports whether the text before at ends with an empty line (or at is the start of the file).
func blankBefore(raw []byte, at int) bool {
	before := bytes.TrimSuffix(raw[:at], []byte("\n"))
	before = bytes.TrimSuffix(before, []byte("\r"))
	return at == 0 || len(before) == 0 || before[len(before)-1] == '\n'
}

// blankLineAt returns the length of the empty line starting at at (0 if the line there is not empty).
func blankLineAt(raw []byte, at int) int {
	switch {
	case bytes.HasPrefix(raw[at:], []byte("\r\n")):
		return 2
	case bytes.HasPrefix(raw[at:], []byte("\n")):
		return 1
	}
	return 0
}

// RenameEntry moves the map entry at from to to by rewriting the keys of the table headers that define it;
// everything inside the sections is kept byte for byte. renamed is false when the file does not define from.
// An entry (or part of one) defined with dotted keys in a parent table, or as an inline table, is not renamed
// here: the caller gets ErrNotEditable and the file is unchanged.
func RenameEntry(file string, raw []byte, from, to Path) ([]byte, bool, error) {
	d, err := Parse(file, raw)
	if err != nil {
		return nil, false, err
	}
	for _, l := range d.Leaves {
		if l.Path.HasPrefix(from) && !d.inEntrySection(l, from) {
			return nil, false, fmt.Errorf("%w: %s is defined by the key %s outside its own [%s] table; rename it by hand",
				ErrNotEditable, from, l.Path, from)
		}
	}
	for _, t := range d.EmptyInline {
		if t.Path.HasPrefix(from) {
			return nil, false, fmt.Errorf("%w: %s is an inline table; rename it by hand", ErrNotEditable, t.Path)
		}
	}
	type edit struct {
		span
		text string
	}
	var edits []edit
	for _, t := range d.Tables {
		if !t.Path.HasPrefix(from) {
			continue
		}
		ks, ke, ok := headerKey(raw, t.HeaderStart, t.HeaderEnd)
		if !ok {
			return nil, false, fmt.Errorf("%w: the header of %s at line %d", ErrNotEditable, t.Path, t.Line)
		}
		edits = append(edits, edit{span{ks, ke}, formatKey(slices.Concat(to, t.Path[len(from):]))})
	}
	if len(edits) == 0 {
		return raw, false, nil
	}
	out := raw
	for i := len(edits) - 1; i >= 0; i-- { // tables are in file order
		out = Splice(out, edits[i].from, edits[i].to, edits[i].text)
	}
	if _, err := Parse(file, out); err != nil {
		return nil, false, fmt.Errorf("%w: %s: the edit would not parse: %v", ErrNotEditable, from, err)
	}
	return out, true, nil
}

// headerKey finds the key text of the [header] or [[header]] line raw[start:end]: the bytes between the
// brackets, quoted segments included.
func headerKey(raw []byte, start, end int) (ks, ke int, ok bool) {
	i := start
	for i < end && (raw[i] == ' ' || raw[i] == '\t') {
		i++
	}
	for n := 0; n < 2 && i < end && raw[i] == '['; n++ {
		i++
	}
	ks = i
	for i < end {
		switch c := raw[i]; c {
		case ']':
			return ks, i, true
		case '"', '\'':
			i++
			for i < end && raw[i] != c {
				if c == '"' && raw[i] == '\\' {
					i++
				}
				i++
			}
		}
		i++
	}
	return 0, 0, false
}
