package store

import (
	"strings"
	"unicode"
)

// maxFTSTerms bounds the work one search can ask of the FTS index.
const maxFTSTerms = 32

// ftsQuery turns free text typed by a user into a safe FTS5 MATCH expression over the content column: each
// whitespace-separated word becomes a quoted phrase (embedded quotes doubled), so FTS5 operators (AND, OR,
// NOT, NEAR, parentheses, column filters, ^) are matched as plain words; a trailing '*' is kept as a prefix
// query. Words without any letter or digit are dropped. All remaining words must occur in one message. The
// result is "" when nothing searchable remains.
func ftsQuery(q string) string {
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
		t := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		if prefix {
			t += "*"
		}
		terms = append(terms, t)
		if len(terms) == maxFTSTerms {
			break
		}
	}
	if len(terms) == 0 {
		return ""
	}
	return "content : (" + strings.Join(terms, " ") + ")"
}
