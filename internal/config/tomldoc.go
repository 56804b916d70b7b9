package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// document is the positional view of a config file that decoding, warnings and surgical edits share.
type document struct {
	file   string
	raw    []byte
	lines  []int // byte offset of the start of each line
	leaves []leaf
	tables []table // explicit [headers] and [[headers]], in file order
	// emptyInline lists key = {} outside array tables: they define a table (a map entry) with no leaf.
	emptyInline []table
}

// leaf is one key = value in the file, flattened through dotted keys and inline tables.
type leaf struct {
	path       Path
	value      any // string, int64, float64, bool, datetime, []any, map[string]any
	valStart   int // byte range of the value's text
	valEnd     int
	line, col  int // of the key
	exprStart  int // whole-line range of the top-level expression (for deletion)
	exprEnd    int
	section    int  // index into tables, -1 for the root table
	inline     bool // defined inside an inline table
	inlineRoot Path // for inline leaves: the key whose value is the outermost inline table
	arrayTable bool // defined under a [[array table]]: read-only for us
}

// table is one explicit table header.
type table struct {
	path        Path
	line        int
	headerStart int
	headerEnd   int // after the header line's newline
	bodyEnd     int // after the last key/value line of the section, or headerEnd when it has none
	array       bool
}

// datetime marks a TOML date/time value, which no schema field accepts.
type datetime string

func parseDocument(file string, raw []byte) (*document, error) {
	d := &document{file: file, raw: raw, lines: []int{0}}
	for i, c := range raw {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(raw)
	section, sectionIdx, inArray := Path(nil), -1, false
	resume := 0 // start of the line after the last complete expression
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			it := e.Key()
			keys, first, _ := keyParts(&it)
			section, inArray = keys, e.Kind == unstable.ArrayTable
			start := d.lineStart(int(first.Offset))
			end := d.eolAfter(start)
			d.tables = append(d.tables, table{path: keys, line: d.lineOf(start), headerStart: start, headerEnd: end,
				bodyEnd: end, array: inArray})
			sectionIdx = len(d.tables) - 1
			resume = end
		case unstable.KeyValue:
			start := int(e.Raw.Offset)
			end := d.eolAfter(int(e.Raw.Offset + e.Raw.Length))
			exprStart := d.lineStart(start)
			if err := d.addKeyValue(raw, e, section, sectionIdx, inArray, nil, exprStart, end); err != nil {
				return nil, err
			}
			if sectionIdx >= 0 {
				d.tables[sectionIdx].bodyEnd = end
			}
			resume = end
		}
	}
	if err := p.Error(); err != nil {
		return nil, d.syntaxError(raw, err, section, resume)
	}
	// The unstable parser does not check TOML's semantic rules (duplicate keys, redefined tables):
	// the full decoder does, and its errors carry a position.
	var m map[string]any
	if err := toml.Unmarshal(raw, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &FileError{File: file, Line: line, Column: col, Key: Path(de.Key()).String(), Msg: strings.TrimPrefix(err.Error(), "toml: ")}
		}
		return nil, &FileError{File: file, Line: 1, Column: 1, Msg: err.Error()}
	}
	return d, nil
}

// rootBodyEnd is where new top-level keys go: after the last root key/value, else at the start of the file.
func (d *document) rootBodyEnd() int {
	end := 0
	for _, l := range d.leaves {
		if l.section == -1 && !l.inline && l.exprEnd > end {
			end = l.exprEnd
		}
	}
	return end
}

func keyParts(it *unstable.Iterator) (Path, unstable.Range, unstable.Range) {
	var keys Path
	var first, last unstable.Range
	for it.Next() {
		n := it.Node()
		if len(keys) == 0 {
			first = n.Raw
		}
		last = n.Raw
		keys = append(keys, string(n.Data))
	}
	return keys, first, last
}

func (d *document) addKeyValue(raw []byte, kv *unstable.Node, section Path, sectionIdx int, inArray bool, inlineRoot Path, exprStart, exprEnd int) error {
	it := kv.Key()
	keys, first, last := keyParts(&it)
	full := append(append(Path{}, section...), keys...)
	v := kv.Value()
	valStart := int(last.Offset + last.Length)
	for valStart < len(raw) && raw[valStart] != '=' {
		valStart++
	}
	valStart++
	for valStart < len(raw) && (raw[valStart] == ' ' || raw[valStart] == '\t') {
		valStart++
	}
	valEnd := int(kv.Raw.Offset + kv.Raw.Length)
	if v.Kind == unstable.InlineTable {
		if inlineRoot == nil {
			inlineRoot = full
		}
		children := v.Children()
		empty := true
		for children.Next() {
			c := children.Node()
			if c.Kind != unstable.KeyValue {
				continue
			}
			empty = false
			if err := d.addKeyValue(raw, c, full, sectionIdx, inArray, inlineRoot, exprStart, exprEnd); err != nil {
				return err
			}
		}
		if empty && !inArray {
			// The range of an empty inline table is its whole expression, so that a map entry written as
			// `key = {}` can be removed or detected like a header.
			d.emptyInline = append(d.emptyInline, table{path: full, line: d.lineOf(int(first.Offset)),
				headerStart: exprStart, headerEnd: exprEnd, bodyEnd: exprEnd})
		}
		return nil
	}
	val, err := nodeValue(v)
	keyOff := int(first.Offset)
	if err != nil {
		return &FileError{File: d.file, Line: d.lineOf(keyOff), Column: d.colOf(keyOff), Key: full.String(), Msg: err.Error()}
	}
	d.leaves = append(d.leaves, leaf{path: full, value: val, valStart: valStart, valEnd: valEnd,
		line: d.lineOf(keyOff), col: d.colOf(keyOff), exprStart: exprStart, exprEnd: exprEnd,
		section: sectionIdx, inline: inlineRoot != nil, inlineRoot: inlineRoot, arrayTable: inArray})
	return nil
}

func nodeValue(n *unstable.Node) (any, error) {
	switch n.Kind {
	case unstable.String:
		return string(n.Data), nil
	case unstable.Bool:
		return string(n.Data) == "true", nil
	case unstable.Integer:
		s := strings.ReplaceAll(string(n.Data), "_", "")
		i, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s out of range", n.Data)
		}
		return i, nil
	case unstable.Float:
		s := strings.ReplaceAll(string(n.Data), "_", "")
		switch strings.TrimLeft(s, "+-") {
		case "inf":
			if strings.HasPrefix(s, "-") {
				return math.Inf(-1), nil
			}
			return math.Inf(1), nil
		case "nan":
			return math.NaN(), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("bad float %s", n.Data)
		}
		return f, nil
	case unstable.Array:
		out := []any{}
		it := n.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			v, err := nodeValue(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case unstable.InlineTable:
		out := map[string]any{}
		it := n.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind != unstable.KeyValue {
				continue
			}
			k := c.Key()
			keys, _, _ := keyParts(&k)
			v, err := nodeValue(c.Value())
			if err != nil {
				return nil, err
			}
			out[Path(keys).String()] = v
		}
		return out, nil
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return datetime(n.Data), nil
	}
	return nil, fmt.Errorf("unsupported value kind %s", n.Kind)
}

func (d *document) lineOf(off int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off })
}

func (d *document) colOf(off int) int { return off - d.lines[d.lineOf(off)-1] + 1 }

func (d *document) lineStart(off int) int { return d.lines[d.lineOf(off)-1] }

// eolAfter returns the offset just past the newline ending the line that contains off (or len(raw)).
func (d *document) eolAfter(off int) int {
	if off > len(d.raw) {
		return len(d.raw)
	}
	i := bytes.IndexByte(d.raw[off:], '\n')
	if i < 0 {
		return len(d.raw)
	}
	return off + i + 1
}

// syntaxError locates a parser error. resume is where the failing expression's search began (the line after
// the last complete expression): the expression starts on the first line from there that is not blank or a
// comment, and only that line's key is named. A later failing line is inside a multi-line value, whose text
// must never reach an error (it may be a secret).
func (d *document) syntaxError(raw []byte, err error, section Path, resume int) error {
	var pe *unstable.ParserError
	off := len(raw)
	msg := err.Error()
	if errors.As(err, &pe) && pe.Highlight != nil {
		off = cap(raw) - cap(pe.Highlight)
	}
	off = max(0, min(off, len(raw)))
	line, col := d.lineOf(off), d.colOf(off)
	if off == len(raw) && off > 0 {
		line, col = d.lineOf(off-1), d.colOf(off-1)+1
	}
	// Name the key being defined by the failing expression when its first line has one.
	keyLine := line
	for l := d.lineOf(resume); l < line; l++ {
		if t := strings.TrimSpace(string(raw[d.lines[l-1]:d.eolAfter(d.lines[l-1])])); t != "" && !strings.HasPrefix(t, "#") {
			keyLine = l
			break
		}
	}
	key := ""
	text := string(raw[d.lines[keyLine-1]:d.eolAfter(d.lines[keyLine-1])])
	if k, _, ok := strings.Cut(text, "="); ok {
		k = strings.TrimSpace(k)
		if k != "" && !strings.HasPrefix(k, "[") && !strings.HasPrefix(k, "#") {
			if section.String() != "" {
				key = section.String() + "." + k
			} else {
				key = k
			}
		}
	} else if t := strings.TrimSpace(text); strings.HasPrefix(t, "[") {
		key = strings.Trim(t, "[] \r\n")
	}
	return &FileError{File: d.file, Line: line, Column: col, Key: key, Msg: msg}
}
