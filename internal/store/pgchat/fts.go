package pgchat

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Full-text search on PostgreSQL matches what the SQLite store's FTS5 index (tokenizer unicode61) matches: the
// tokens are cut and folded here, in Go, by unicode61's rules (a token is a run of letters, digits and
// private-use characters; everything else separates; case folded; the accents of Latin-1 letters removed), and
// reach the server as a tsvector and a tsquery literal (casts apply no dictionary, no stemming, no stop words).
// The server's own parser (to_tsvector) would cut "foo-bar" or "a.example" differently.

// Bounds of what one message's index and one query hold.
const (
	maxFTSTerms    = 32        // words of a query, as on SQLite
	maxLexemeBytes = 2046      // PostgreSQL refuses longer lexemes; longer tokens are cut (in documents and queries alike)
	maxPositions   = 256       // positions kept per lexeme (PostgreSQL's own limit)
	maxPosition    = 16383     // PostgreSQL's largest position: a phrase past it is not found
	maxVectorBytes = 512 << 10 // distinct lexeme bytes indexed per message, far under the 1 MB tsvector limit
)

func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// latin1Fold maps the lowercase Latin-1 letters U+00E0..U+00FF to their base letter where Unicode decomposes
// them into a letter and a combining accent (unicode61's remove_diacritics); the others map to themselves.
const latin1Fold = "aaaaaaæceeeeiiiiðnooooo÷øuuuuyþy"

func fold(r rune) rune {
	r = unicode.ToLower(r)
	if r >= 0xE0 && r <= 0xFF {
		return []rune(latin1Fold)[r-0xE0]
	}
	return r
}

// tokens cuts text into folded tokens, each at most maxLexemeBytes.
func tokens(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range strings.ToValidUTF8(text, " ") {
		if !isTokenRune(r) {
			flush()
			continue
		}
		if b.Len()+utf8.RuneLen(fold(r)) > maxLexemeBytes {
			continue // the rest of an over-long token is dropped, here and in queries
		}
		b.WriteRune(fold(r))
	}
	flush()
	return out
}

// quoteLexeme writes lex as a quoted lexeme of a tsvector or tsquery literal.
func quoteLexeme(b *strings.Builder, lex string) {
	b.WriteByte('\'')
	for i := 0; i < len(lex); i++ {
		switch lex[i] {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(lex[i])
		}
	}
	b.WriteByte('\'')
}

// tsvector is content's index entry, a tsvector literal: each distinct token with its positions.
func tsvector(content string) string {
	pos := map[string][]int{}
	var order []string
	size := 0
	for i, tok := range tokens(content) {
		p := min(i+1, maxPosition)
		ps, seen := pos[tok]
		if !seen {
			if size+len(tok) > maxVectorBytes {
				continue
			}
			size += len(tok)
			order = append(order, tok)
		}
		if len(ps) < maxPositions && (len(ps) == 0 || ps[len(ps)-1] != p) {
			pos[tok] = append(ps, p)
		}
	}
	sort.Strings(order)
	var b strings.Builder
	for i, tok := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteLexeme(&b, tok)
		for j, p := range pos[tok] {
			if j == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	return b.String()
}

// tsquery turns free text typed by a user into a tsquery literal with the meaning the SQLite store gives it:
// each whitespace-separated word is a phrase of its tokens (so operators and punctuation are plain text), a
// trailing '*' makes its last token a prefix, words without a letter or digit are dropped, at most maxFTSTerms
// words count, and all must occur in one message. "" when nothing searchable remains.
func tsquery(q string) string {
	var terms []string
	q = strings.ToValidUTF8(q, " ")
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		prefix := false
		if strings.HasSuffix(w, "*") {
			w = strings.TrimRight(w, "*")
			prefix = true
		}
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
			continue
		}
		toks := tokens(w)
		if len(toks) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteByte('(')
		for i, tok := range toks {
			if i > 0 {
				b.WriteString(" <-> ")
			}
			quoteLexeme(&b, tok)
			if prefix && i == len(toks)-1 {
				b.WriteString(":*")
			}
		}
		b.WriteByte(')')
		terms = append(terms, b.String())
		if len(terms) == maxFTSTerms {
			break
		}
	}
	return strings.Join(terms, " & ")
}
