package provider

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// minPartialSecret is the shortest start of a configured secret removed from the end of a cut text: shorter
// fragments say next to nothing about the secret.
const minPartialSecret = 4

// keyShapes match credentials by their look, for keys the scrubber was not given (another key echoed back by
// a proxy, a key in a URL): well-known provider prefixes, bearer tokens, and long token-like values after a
// key-ish name. Group 1, when present, is kept; the rest becomes [redacted]. The runs are long enough that
// ordinary words ("Invalid token: expected", "task-manager") are left alone.
var keyShapes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`),
	regexp.MustCompile(`(?i)((?:\b|_)(?:api[_-]?key|apikey|key|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password)["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/=-]{16,}`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_*-]{8,}`),
	regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{20,}`),
	regexp.MustCompile(`\b(?:gsk|ghp|gho|ghs|ghu|github_pat|hf|xai|pplx|glpat)[_-][A-Za-z0-9_-]{16,}`),
}

// scrubber removes secrets from text that may leave the daemon (errors, logs). Configured secrets are removed
// wherever they appear, key shapes too, and cutTail removes a configured secret's start left at the end of a
// cut text.
type scrubber struct {
	secrets  []string // the configured secrets
	replacer *strings.Replacer
}

func newScrubber(secrets []string) *scrubber {
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, redacted)
	}
	return &scrubber{secrets: secrets, replacer: strings.NewReplacer(pairs...)}
}

// scrub returns text without any configured secret or key shape. If replacing still leaves a secret (a secret
// that overlaps the marker, like "ted]x"), the text is withheld entirely.
func (s *scrubber) scrub(text string) string { return s.scrubWith(text, true) }

// keyShapeHints holds, for each of keyShapes, literals one of which every match of it contains: lowercase for a
// case-insensitive shape (keyShapeFolds), as written otherwise. A text that holds none of a shape's hints cannot
// match it, so that regexp is not run; most log text (ids, names, messages) then runs none. A text with a
// non-ASCII byte runs every regexp: case-insensitive matching folds some non-ASCII letters (K, ſ) onto ASCII ones.
var (
	keyShapeHints = [][]string{
		{"bearer"},
		{"key", "token", "secret", "password"},
		{"sk-"},
		{"AIza"},
		{"gsk", "ghp", "gho", "ghs", "ghu", "github_pat", "hf", "xai", "pplx", "glpat"},
	}
	keyShapeFolds = []bool{true, true, false, false, false}
)

// mayMatch reports whether key shape i can match text (ASCII); lower is text in lowercase, made on first need.
func mayMatch(i int, text string, lower *string) bool {
	t := text
	if keyShapeFolds[i] {
		if *lower == "" {
			*lower = strings.ToLower(text)
		}
		t = *lower
	}
	for _, h := range keyShapeHints[i] {
		if strings.Contains(t, h) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// scrubWith is scrub; hints false runs every key shape's regexp (for the test that hints skip only regexps that
// cannot match).
func (s *scrubber) scrubWith(text string, hints bool) string {
	for range 2 {
		text = s.replacer.Replace(text)
		// lower is not redone after a shape replaced something: a replacement only cuts text and puts in
		// "[redacted]", which holds no hint and starts and ends with bytes no hint has, so the hints of the
		// old lower are a superset of the new text's.
		ascii, lower := hints && isASCII(text), ""
		for i, re := range keyShapes {
			if ascii && !mayMatch(i, text, &lower) {
				continue
			}
			if re.NumSubexp() > 0 {
				text = re.ReplaceAllString(text, "${1}"+redacted)
			} else {
				text = re.ReplaceAllLiteralString(text, redacted)
			}
		}
		if !s.holdsSecret(text) {
			return text
		}
	}
	if !s.holdsSecret(redacted) {
		return redacted
	}
	return ""
}

// cutTail removes from the end of text the start (at least minPartialSecret bytes) of a configured secret, as
// a cut through the secret leaves it. Use it on text whose end is a cut.
func (s *scrubber) cutTail(text string) string {
	for _, sec := range s.secrets {
		for n := len(sec) - 1; n >= minPartialSecret; n-- {
			if strings.HasSuffix(text, sec[:n]) {
				text = text[:len(text)-n] + redacted
				break
			}
		}
	}
	if s.holdsSecret(text) {
		return s.scrub(text)
	}
	return text
}

func (s *scrubber) holdsSecret(text string) bool {
	for _, sec := range s.secrets {
		if strings.Contains(text, sec) {
			return true
		}
	}
	return false
}

// Scrubber returns a function that removes the given secrets (those of at least minSecretLength bytes) and
// anything shaped like a credential from text, as the providers scrub their errors. It is safe for concurrent
// use.
func Scrubber(secrets []string) func(string) string {
	var keep []string
	for _, s := range secrets {
		if len(s) >= minSecretLength {
			keep = append(keep, s)
		}
	}
	return newScrubber(keep).scrub
}
