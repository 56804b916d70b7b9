package skills

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on what a SKILL.md may hold. A file over them is refused, never partly read.
const (
	MaxSkillBytes       = 256 << 10 // the whole SKILL.md
	maxFrontmatterBytes = 16 << 10
	maxFrontmatterLines = 400
	maxValueBytes       = 8 << 10 // one field's value
	maxTags             = 64
	maxKeyBytes         = 64
)

// ErrInvalid reports bad input: a malformed SKILL.md, a bad skill name, an unknown or refused bundle.
var ErrInvalid = errors.New("skills: invalid")

// ErrNotFound reports a skill that is not in its bundle.
var ErrNotFound = errors.New("skills: not found")

// Frontmatter is the header of a SKILL.md (upstream's SkillFrontmatter, without slash_options, which is
// skipped when present). Its JSON form is upstream's: optional fields are omitted when empty.
type Frontmatter struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	License     string   `json:"license,omitempty"`
	Author      string   `json:"author,omitempty"`
	Version     string   `json:"version,omitempty"`
	Category    string   `json:"category,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Always keeps the skill's instructions in the system prompt even in compact mode.
	Always bool `json:"always,omitempty"`
}

// Document is a parsed SKILL.md: its front matter and the instructions that follow it.
type Document struct {
	Frontmatter Frontmatter
	Body        string
	// HasFrontmatter is false for a file without the leading "---" block (then Frontmatter is empty).
	HasFrontmatter bool
}

// Parse reads a SKILL.md. The front matter is optional; when present it is a "---" line, flat "key: value"
// lines, and a closing "---" line (CRLF is accepted). Values are plain, 'single' or "double" quoted; tags is an
// inline [a, b] list or "- item" lines; description may be a block scalar (>, >-, |, |-) of indented lines;
// always is true or false. Unknown keys and their indented lines are skipped. Anything else, and any input
// over the bounds, is an error wrapping ErrInvalid that says what and where.
func Parse(content string) (Document, error) {
	if len(content) > MaxSkillBytes {
		return Document{}, fmt.Errorf("%w: SKILL.md is %d bytes, more than %d", ErrInvalid, len(content), MaxSkillBytes)
	}
	if !utf8.ValidString(content) {
		return Document{}, fmt.Errorf("%w: SKILL.md is not valid UTF-8", ErrInvalid)
	}
	text := strings.ReplaceAll(content, "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Document{Body: text}, nil
	}
	var head, body string
	if i := strings.Index(rest, "\n---\n"); i >= 0 {
		head, body = rest[:i], rest[i+len("\n---\n"):]
	} else if h, ok := strings.CutSuffix(rest, "\n---"); ok {
		head = h
	} else if strings.HasPrefix(rest, "---\n") || rest == "---" {
		head, body = "", strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	} else {
		return Document{}, fmt.Errorf("%w: the front matter has no closing --- line", ErrInvalid)
	}
	if len(head) > maxFrontmatterBytes {
		return Document{}, fmt.Errorf("%w: the front matter is over %d bytes", ErrInvalid, maxFrontmatterBytes)
	}
	fm, err := parseHead(head)
	if err != nil {
		return Document{}, err
	}
	return Document{Frontmatter: fm, Body: strings.TrimPrefix(body, "\n"), HasFrontmatter: true}, nil
}

// parseHead parses the lines between the delimiters.
func parseHead(head string) (Frontmatter, error) {
	var fm Frontmatter
	if head == "" {
		return fm, nil
	}
	lines := strings.Split(head, "\n")
	if len(lines) > maxFrontmatterLines {
		return fm, fmt.Errorf("%w: the front matter has more than %d lines", ErrInvalid, maxFrontmatterLines)
	}
	bad := func(n int, format string, args ...any) error {
		return fmt.Errorf("%w: front matter line %d: %s", ErrInvalid, n+1, fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if indented(line) || strings.HasPrefix(line, "- ") || line == "-" {
			return fm, bad(i, "an indented or list line with no key above it")
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return fm, bad(i, "want key: value")
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !validKey(key) {
			return fm, bad(i, "bad key %q", clip(key))
		}
		if seen[key] {
			return fm, bad(i, "%s is given twice", key)
		}
		seen[key] = true
		// The lines that belong to this key: indented ones, and "- item" ones for a list.
		j := i + 1
		for j < len(lines) && (indented(lines[j]) || strings.TrimSpace(lines[j]) == "" || strings.HasPrefix(lines[j], "- ") || lines[j] == "-") {
			j++
		}
		for j > i+1 && strings.TrimSpace(lines[j-1]) == "" { // trailing blank lines are not the key's
			j--
		}
		block := lines[i+1 : j]
		i = j - 1
		known := key == "name" || key == "description" || key == "license" || key == "author" || key == "version" ||
			key == "category" || key == "tags" || key == "always"
		if !known {
			continue // unknown keys (slash_options, metadata...) are skipped with their blocks
		}
		if len(value) > maxValueBytes {
			return fm, bad(i, "%s is over %d bytes", key, maxValueBytes)
		}
		switch key {
		case "tags":
			tags, err := parseList(value, block)
			if err != nil {
				return fm, bad(i, "tags: %v", err)
			}
			fm.Tags = tags
			continue
		case "description":
			if s, ok, err := blockScalar(value, block); ok {
				if err != nil {
					return fm, bad(i, "description: %v", err)
				}
				fm.Description = s
				continue
			}
		}
		if len(block) > 0 {
			return fm, bad(i+1, "%s has indented lines under it; quote the value or use a block scalar (description only)", key)
		}
		s, err := scalar(value)
		if err != nil {
			return fm, bad(i, "%s: %v", key, err)
		}
		switch key {
		case "name":
			fm.Name = s
		case "description":
			fm.Description = s
		case "license":
			fm.License = s
		case "author":
			fm.Author = s
		case "version":
			fm.Version = s
		case "category":
			fm.Category = s
		case "always":
			switch strings.ToLower(s) {
			case "true", "yes":
				fm.Always = true
			case "false", "no", "":
				fm.Always = false
			default:
				return fm, bad(i, "always must be true or false, got %q", clip(s))
			}
		}
	}
	return fm, nil
}

func indented(line string) bool { return strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") }

func validKey(k string) bool {
	if k == "" || len(k) > maxKeyBytes {
		return false
	}
	for i, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case i > 0 && (r >= '0' && r <= '9' || r == '-'):
		default:
			return false
		}
	}
	return true
}

// scalar decodes a one-line value: plain (a trailing " #comment" removed), 'single' or "double" quoted.
func scalar(v string) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v[0] == '"':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch c {
			case '"':
				if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", fmt.Errorf("text after the closing quote")
				}
				return b.String(), nil
			case '\\':
				if i+1 == len(v) {
					return "", fmt.Errorf("a backslash ends the value")
				}
				i++
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '"', '\\', '/':
					b.WriteByte(v[i])
				default:
					return "", fmt.Errorf("unsupported escape \\%c", v[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("unterminated double quote")
	case v[0] == '\'':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			if v[i] != '\'' {
				b.WriteByte(v[i])
				continue
			}
			if i+1 < len(v) && v[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("text after the closing quote")
			}
			return b.String(), nil
		}
		return "", fmt.Errorf("unterminated single quote")
	case v[0] == '[' || v[0] == '{' || v[0] == '&' || v[0] == '*' || v[0] == '!' || v[0] == '|' || v[0] == '>':
		return "", fmt.Errorf("%q values are not supported here", v[:1])
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}

// blockScalar decodes a description given as a block scalar; ok is false when value is not one.
func blockScalar(value string, block []string) (string, bool, error) {
	var folded, keep bool
	switch value {
	case ">":
		folded, keep = true, true
	case ">-":
		folded = true
	case "|":
		keep = true
	case "|-":
	default:
		return "", false, nil
	}
	parts := make([]string, 0, len(block))
	size := 0
	for _, l := range block {
		if strings.TrimSpace(l) != "" && !indented(l) {
			return "", true, fmt.Errorf("block lines must be indented")
		}
		parts = append(parts, strings.TrimSpace(l))
		if size += len(l); size > maxValueBytes {
			return "", true, fmt.Errorf("over %d bytes", maxValueBytes)
		}
	}
	var s string
	if folded { // lines join with spaces; a blank line is a paragraph break
		var b strings.Builder
		for i, p := range parts {
			switch {
			case p == "":
				b.WriteString("\n")
			case i > 0 && parts[i-1] != "":
				b.WriteString(" " + p)
			default:
				b.WriteString(p)
			}
		}
		s = b.String()
	} else {
		s = strings.Join(parts, "\n")
	}
	s = strings.TrimRight(s, "\n")
	if keep && s != "" {
		s += "\n"
	}
	return strings.TrimSpace(s), true, nil
}

// parseList decodes tags: an inline [a, "b"] list or "- item" lines.
func parseList(value string, block []string) ([]string, error) {
	var items []string
	switch {
	case value != "" && len(block) > 0:
		return nil, fmt.Errorf("both an inline value and lines under it")
	case strings.HasPrefix(value, "["):
		inner, ok := strings.CutSuffix(value[1:], "]")
		if !ok {
			return nil, fmt.Errorf("unterminated [ list")
		}
		if strings.TrimSpace(inner) != "" {
			for _, part := range splitOutsideQuotes(inner) {
				s, err := scalar(strings.TrimSpace(part))
				if err != nil {
					return nil, err
				}
				items = append(items, s)
			}
		}
	case value != "":
		s, err := scalar(value) // one tag on the line
		if err != nil {
			return nil, err
		}
		items = append(items, s)
	default:
		for _, l := range block {
			t := strings.TrimSpace(l)
			if t == "" {
				continue
			}
			rest, ok := strings.CutPrefix(t, "-")
			if !ok {
				return nil, fmt.Errorf("want \"- item\" lines")
			}
			s, err := scalar(strings.TrimSpace(rest))
			if err != nil {
				return nil, err
			}
			items = append(items, s)
		}
	}
	if len(items) > maxTags {
		return nil, fmt.Errorf("more than %d tags", maxTags)
	}
	for _, s := range items {
		if s == "" || len(s) > maxKeyBytes {
			return nil, fmt.Errorf("a tag is empty or over %d bytes", maxKeyBytes)
		}
	}
	return items, nil
}

// splitOutsideQuotes splits s at the commas that are not inside a quoted item.
func splitOutsideQuotes(s string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Serialize renders d as a SKILL.md that Parse reads back to the same document: every string quoted, tags as
// an inline list, always only when true, then a blank line and the body.
func Serialize(d Document) string {
	var b strings.Builder
	b.WriteString("---\n")
	field := func(k, v string) {
		if v != "" || k == "name" || k == "description" {
			fmt.Fprintf(&b, "%s: %s\n", k, quote(v))
		}
	}
	fm := d.Frontmatter
	field("name", fm.Name)
	field("description", fm.Description)
	field("license", fm.License)
	field("author", fm.Author)
	field("version", fm.Version)
	field("category", fm.Category)
	if len(fm.Tags) > 0 {
		q := make([]string, len(fm.Tags))
		for i, t := range fm.Tags {
			q[i] = quote(t)
		}
		fmt.Fprintf(&b, "tags: [%s]\n", strings.Join(q, ", "))
	}
	if fm.Always {
		b.WriteString("always: true\n")
	}
	b.WriteString("---\n")
	if d.Body != "" {
		b.WriteString("\n")
		b.WriteString(d.Body)
		if !strings.HasSuffix(d.Body, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// quote renders s as a double-quoted scalar that scalar decodes back to s.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
