package tomledit

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Document is the positional view of a config file that decoding, warnings and surgical edits share. Its
// fields describe the text Parse read: callers read them and never change them.
type Document struct {
	File   string
	Raw    []byte
	lines  []int // byte offset of the start of each line
	Leaves []Leaf
	Tables []Table // explicit [headers] and [[headers]], in file order
	// EmptyInline lists key = {} outside array tables: they define a table (a map entry) with no leaf.
	EmptyInline []Table
}

// Leaf is one key = value in the file, flattened through dotted keys and inline tables.
type Leaf struct {
	Path       Path
	Value      any // string, int64, float64, bool, Datetime, []any, map[string]any
	ValStart   int // byte range of the value's text
	ValEnd     int
	Line, Col  int // of the key
	ExprStart  int // whole-line range of the top-level expression (for deletion)
	ExprEnd    int
	Section    int  // index into Tables, -1 for the root table
	Inline     bool // defined inside an inline table
	InlineRoot Path // for inline leaves: the key whose value is the outermost inline table
	ArrayTable bool // defined under a [[array table]]: read-only for us
}

// Table is one explicit table header (or, in EmptyInline, one `key = {}`).
type Table struct {
	Path        Path
	Line        int
	HeaderStart int
	HeaderEnd   int // after the header line's newline
	BodyEnd     int // after the last key/value line of the section, or HeaderEnd when it has none
	Array       bool
}

// Datetime marks a TOML date/time value, which no schema field accepts.
type Datetime string

// Parse reads raw, the text of the file named file (in errors). Syntax errors and TOML's semantic errors
// (duplicate keys, redefined tables) are a *FileError.
func Parse(file string, raw []byte) (*Document, error) {
	d := &Document{File: file, Raw: raw, lines: []int{0}}
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
			d.Tables = append(d.Tables, Table{Path: keys, Line: d.lineOf(start), HeaderStart: start, HeaderEnd: end,
				BodyEnd: end, Array: inArray})
			sectionIdx = len(d.Tables) - 1
			resume = end
		case unstable.KeyValue:
			start := int(e.Raw.Offset)
			end := d.eolAfter(int(e.Raw.Offset + e.Raw.Length))
			exprStart := d.lineStart(start)
			if err := d.addKeyValue(raw, e, section, sectionIdx, inArray, nil, exprStart, end); err != nil {
				return nil, err
			}
			if sectionIdx >= 0 {
				d.Tables[sectionIdx].BodyEnd = end
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

// LineFor returns the line defining p: its key, else its table header, else the first key below it; 0 if none
// (or d is nil).
func (d *Document) LineFor(p Path) int {
	if d == nil {
		return 0
	}
	for q := p; len(q) > 0; q = q[:len(q)-1] {
		for _, l := range d.Leaves {
			if slices.Equal(l.Path, q) {
				return l.Line
			}
		}
		for _, t := range d.Tables {
			if slices.Equal(t.Path, q) {
				return t.Line
			}
		}
		for _, l := range d.Leaves {
			if l.Path.HasPrefix(q) {
				return l.Line
			}
		}
	}
	return 0
}

// Tree decodes the whole file as a plain TOML tree (go-toml's types: int64, float64, bool, string, time and
// local date/time values, []any, map[string]any).
func (d *Document) Tree() (map[string]any, error) {
	var root map[string]any
	if err := toml.Unmarshal(d.Raw, &root); err != nil {
		return nil, err
	}
	return root, nil
}

// rootBodyEnd is where new top-level keys go: after the last root key/value, else at the start of the file.
func (d *Document) rootBodyEnd() int {
	end := 0
	for _, l := range d.Leaves {
		if l.Section == -1 && !l.Inline && l.ExprEnd > end {
			end = l.ExprEnd
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

func (d *Document) addKeyValue(raw []byte, kv *unstable.Node, section Path, sectionIdx int, inArray bool, inlineRoot Path, exprStart, exprEnd int) error {
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
			d.EmptyInline = append(d.EmptyInline, Table{Path: full, Line: d.lineOf(int(first.Offset)),
				HeaderStart: exprStart, HeaderEnd: exprEnd, BodyEnd: exprEnd})
		}
		return nil
	}
	val, err := nodeValue(v)
	keyOff := int(first.Offset)
	if err != nil {
		return &FileError{File: d.File, Line: d.lineOf(keyOff), Column: d.colOf(keyOff), Key: full.String(), Msg: err.Error()}
	}
	d.Leaves = append(d.Leaves, Leaf{Path: full, Value: val, ValStart: valStart, ValEnd: valEnd,
		Line: d.lineOf(keyOff), Col: d.colOf(keyOff), ExprStart: exprStart, ExprEnd: exprEnd,
		Section: sectionIdx, Inline: inlineRoot != nil, InlineRoot: inlineRoot, ArrayTable: inArray})
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
		return Datetime(n.Data), nil
	}
	return nil, fmt.Errorf("unsupported value kind %s", n.Kind)
}

func (d *Document) lineOf(off int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off })
}

func (d *Document) colOf(off int) int { return off - d.lines[d.lineOf(off)-1] + 1 }

func (d *Document) lineStart(off int) int { return d.lines[d.lineOf(off)-1] }

// eolAfter returns the offset just past the newline ending the line that contains off (or len(raw)).
func (d *Document) eolAfter(off int) int {
	if off > len(d.Raw) {
		return len(d.Raw)
	}
	i := bytes.IndexByte(d.Raw[off:], '\n')
	if i < 0 {
		return len(d.Raw)
	}
	return off + i + 1
}

// syntaxError locates a parser error. resume is where the failing expression's search began (the line after
// the last complete expression): the expression starts on the first line from there that is not blank or a
// comment, and only that line's key is named. A later failing line is inside a multi-line value, whose text
// must never reach an error (it may be a secret).
func (d *Document) syntaxError(raw []byte, err error, section Path, resume int) error {
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
	return &FileError{File: d.File, Line: line, Column: col, Key: key, Msg: msg}
}
