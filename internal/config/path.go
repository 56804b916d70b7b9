package config

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Path is a parsed property path, one element per segment. Map keys are kept verbatim.
//
// Syntax: segments separated by '.'; a segment is either bare (one or more characters other than '.', '"',
// '\\', whitespace and control characters) or double-quoted, where \" and \\ are the only escapes. A map key
// containing dots is written quoted: providers.models.openai."gpt-4.1".model. Segments naming schema fields
// are kebab→snake translated when resolved (max-tokens ⇒ max_tokens); map keys never are.
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

// prop is a property path resolved against the schema.
type prop struct {
	path   Path         // canonical segments (field names snake_case, map keys verbatim)
	typ    reflect.Type // type of the addressed value
	leaf   bool         // scalar, pointer-to-scalar or slice: settable with one value
	secret bool         // a secret field or inside one
}

func (p prop) String() string { return p.path.String() }

var configType = reflect.TypeFor[Config]()

// resolve maps a path onto the schema, translating field segments kebab→snake.
func resolve(p Path) (prop, error) {
	r := prop{typ: configType}
	var keys []string // allowed map keys for the next segment, from a `keys` tag
	for i, seg := range p {
		t := r.typ
		switch t.Kind() {
		case reflect.Struct:
			name := strings.ReplaceAll(seg, "-", "_")
			f, ok := fieldByTag(t, name)
			if !ok {
				return prop{}, fmt.Errorf("%w: %s", ErrUnknownProp, p[:i+1])
			}
			r.path = append(r.path, name)
			r.typ = f.Type
			r.secret = r.secret || isSecretName(name)
			keys = nil
			if k := f.Tag.Get("keys"); k != "" {
				keys = strings.Split(k, "|")
			}
		case reflect.Map:
			if seg == "" || (keys != nil && !contains(keys, seg)) {
				return prop{}, fmt.Errorf("%w: %s", ErrUnknownProp, p[:i+1])
			}
			keys = nil
			r.path = append(r.path, seg)
			r.typ = t.Elem()
		default:
			return prop{}, fmt.Errorf("%w: %s", ErrUnknownProp, p[:i+1])
		}
	}
	k := r.typ.Kind()
	if k == reflect.Pointer {
		k = r.typ.Elem().Kind()
	}
	r.leaf = k != reflect.Struct && k != reflect.Map
	return r, nil
}

// fieldByTag finds the struct field whose toml tag name is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	n, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return n
}

// isSecretName reports whether a schema field holds secrets (state.md §3).
func isSecretName(name string) bool {
	switch name {
	case "api_key", "password", "extra_headers", "env", "paired_tokens", "db_url":
		return true
	}
	if strings.HasPrefix(name, "max_") {
		return false // limits such as max_tokens count tokens; they are not tokens
	}
	return strings.HasSuffix(name, "_token") || strings.HasSuffix(name, "_tokens") ||
		strings.HasSuffix(name, "_secret") || strings.HasSuffix(name, "_password")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
