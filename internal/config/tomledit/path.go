package tomledit

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidPath is returned for a property path that does not parse (config re-exports it).
var ErrInvalidPath = errors.New("config: invalid property path")

// Path is a parsed property path, one element per segment. Map keys are kept verbatim.
//
// Syntax: segments separated by '.'; a segment is either bare (one or more characters other than '.', '"',
// '\\', whitespace and control characters) or double-quoted, where \" and \\ are the only escapes. A map key
// containing dots is written quoted: providers.models.openai."gpt-4.1".model.
type Path []string

// ParsePath parses a property path (valid UTF-8 only). It never panics; a malformed path yields an error wrapping ErrInvalidPath.
func ParsePath(s string) (Path, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidPath)
	}
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrInvalidPath)
	}
	var p Path
	i := 0
	for {
		if i >= len(s) {
			return nil, fmt.Errorf("%w: %q ends with '.'", ErrInvalidPath, s)
		}
		var seg string
		if s[i] == '"' {
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				c := s[j]
				if c == '"' {
					closed = true
					j++
					break
				}
				if c == '\\' {
					if j+1 >= len(s) || (s[j+1] != '"' && s[j+1] != '\\') {
						return nil, fmt.Errorf("%w: %q: bad escape at byte %d", ErrInvalidPath, s, j)
					}
					b.WriteByte(s[j+1])
					j += 2
					continue
				}
				b.WriteByte(c)
				j++
			}
			if !closed {
				return nil, fmt.Errorf("%w: %q: unterminated quoted segment", ErrInvalidPath, s)
			}
			seg, i = b.String(), j
		} else {
			j := i
			for j < len(s) && s[j] != '.' {
				j++
			}
			seg = s[i:j]
			if !isBareSegment(seg) {
				return nil, fmt.Errorf("%w: %q: segment %q must be quoted", ErrInvalidPath, s, seg)
			}
			i = j
		}
		p = append(p, seg)
		if i == len(s) {
			return p, nil
		}
		if s[i] != '.' {
			return nil, fmt.Errorf("%w: %q: expected '.' at byte %d", ErrInvalidPath, s, i)
		}
		i++
	}
}

func isBareSegment(seg string) bool {
	if seg == "" || !utf8.ValidString(seg) {
		return false
	}
	for _, r := range seg {
		if r == '.' || r == '"' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// String formats the path so that ParsePath(p.String()) equals p.
func (p Path) String() string {
	var b strings.Builder
	for i, seg := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		if isBareSegment(seg) {
			b.WriteString(seg)
			continue
		}
		b.WriteByte('"')
		for k := 0; k < len(seg); k++ {
			if seg[k] == '"' || seg[k] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(seg[k])
		}
		b.WriteByte('"')
	}
	return b.String()
}

// HasPrefix reports whether q is a segment-wise prefix of p.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}
