package tomledit

import (
	"bytes"
	"fmt"
	"strings"
)

// MaxCommentBytes bounds the comment Comment writes above one key.
const MaxCommentBytes = 4096

// Comment writes comment as the `# ...` lines directly above the key at path (one line per line of comment),
// replacing the comment lines that were there; blank lines above the key are kept. An empty comment only
// removes them. The key must be set in the file on a line of its own (not inside an inline or array table).
// A comment with a control character other than tab and newline is refused: it could not be read back as a
// comment (a carriage return ends a TOML comment line).
func Comment(file string, raw []byte, path Path, comment string) ([]byte, error) {
	if len(comment) > MaxCommentBytes {
		return nil, fmt.Errorf("%w: the comment on %s is longer than %d bytes", ErrNotEditable, path, MaxCommentBytes)
	}
	for _, r := range comment {
		if r != '\t' && r != '\n' && (r < 0x20 || r == 0x7f) {
			return nil, fmt.Errorf("%w: the comment on %s has a control character (U+%04X)", ErrNotEditable, path, r)
		}
	}
	d, err := Parse(file, raw)
	if err != nil {
		return nil, err
	}
	l, ok := d.Find(path)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not set in the file (it is at its default), so it has no line to comment; set it first", ErrNotEditable, path)
	}
	if l.Inline || l.ArrayTable {
		return nil, fmt.Errorf("%w: %s is inside an inline or array table; comment it by hand", ErrNotEditable, path)
	}
	// The key's own prefix runs from the end of whatever precedes it (a key or a table header) to its line.
	floor := 0
	for _, x := range d.Leaves {
		if x.ExprEnd <= l.ExprStart && x.ExprEnd > floor {
			floor = x.ExprEnd
		}
	}
	for _, t := range d.Tables {
		if t.HeaderEnd <= l.ExprStart && t.HeaderEnd > floor {
			floor = t.HeaderEnd
		}
	}
	eol := d.eol()
	var kept strings.Builder
	for _, line := range bytes.SplitAfter(raw[floor:l.ExprStart], []byte("\n")) {
		if len(line) > 0 && !bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("#")) {
			kept.Write(line)
		}
	}
	if comment != "" {
		for line := range strings.SplitSeq(strings.TrimSuffix(comment, "\n"), "\n") {
			kept.WriteString(strings.TrimRight("# "+line, " \t") + eol)
		}
	}
	out := Splice(raw, floor, l.ExprStart, kept.String())
	if _, err := Parse(file, out); err != nil {
		return nil, fmt.Errorf("%w: %s: the comment would not parse: %v", ErrNotEditable, path, err)
	}
	return out, nil
}
