package memory

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of what a recall searches and what a memory holds. A recall's cost grows with its terms (each is an
// FTS5 phrase, a LIKE pattern and, in SQLite, a weight probe), so every backend searches at most the first
// MaxQueryBytes of a recall text and, of those, the first MaxQueryTerms distinct terms: a long prompt recalls
// by its start. memory/search refuses a longer query instead of cutting it.
const (
	MaxQueryBytes   = 4 << 10  // bytes of a recall text searched; memory/search refuses more
	MaxQueryTerms   = 32       // distinct terms of a recall text searched
	MaxKeyBytes     = 256      // bytes of a memory's key
	MaxContentBytes = 64 << 10 // bytes of a memory's content; an auto-saved message is cut to it
)

// CheckQuery validates a memory/search query: ErrInvalid for a NUL byte or more than MaxQueryBytes.
func CheckQuery(text string) error {
	if strings.IndexByte(text, 0) >= 0 {
		return fmt.Errorf("%w: query must not contain a NUL byte", ErrInvalid)
	}
	if len(text) > MaxQueryBytes {
		return fmt.Errorf("%w: query is %d bytes, at most %d are allowed", ErrInvalid, len(text), MaxQueryBytes)
	}
	return nil
}

// checkRecord validates a memory to store: a key of at most MaxKeyBytes without NUL, content of at most
// MaxContentBytes.
func checkRecord(key, content string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: key is empty", ErrInvalid)
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("%w: key is %d bytes, at most %d are allowed", ErrInvalid, len(key), MaxKeyBytes)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("%w: key must not contain a NUL byte", ErrInvalid)
	case len(content) > MaxContentBytes:
		return fmt.Errorf("%w: content is %d bytes, at most %d are allowed", ErrInvalid, len(content), MaxContentBytes)
	}
	return nil
}

// clipQuery is the part of q a backend searches: the first MaxQueryBytes of its text (cut on a character
// boundary), NUL bytes read as spaces, and of its terms the first MaxQueryTerms distinct ones.
func clipQuery(q Query) Query {
	text := q.Text
	if len(text) > MaxQueryBytes {
		cut := MaxQueryBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	text = strings.ReplaceAll(text, "\x00", " ")
	fields := strings.Fields(text)
	seen := make(map[string]bool, min(len(fields), MaxQueryTerms))
	terms := fields[:0]
	for _, f := range fields {
		if len(terms) == MaxQueryTerms {
			break
		}
		if !seen[f] {
			seen[f] = true
			terms = append(terms, f)
		}
	}
	q.Text = strings.Join(terms, " ")
	return q
}

// clipContent cuts content to MaxContentBytes on a character boundary.
func clipContent(content string) string {
	if len(content) <= MaxContentBytes {
		return content
	}
	cut := MaxContentBytes
	for cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	return content[:cut]
}
