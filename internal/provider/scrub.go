package provider

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// minPartialSecret is the shortest start of a configured secret removed from the end of a cut text: shorter
// fragments say next to nothing about the secret.
const minPartialSecret = 4

// keyShapes match credentials by their look, for keys the scrubber was not given (another key echoed back by
// a proxy, a key in a URL): well-known provider prefixes, bearer tokens, and long token-like values after a
// key-ish name. Group 1, when present, is kept; the rest becomes [redacted]. The runs are long enough that
// ordinary words ("Invalid token: expected", "task-manager") are left alone.
var keyShapes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`),
		regexp.MustCompile(`(?i)((?:\b|_)(?:api[_-]?key|apikey|key|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password)["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/=-]{16,}`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_*-]{8,}`),
		regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{20,}`),
		regexp.MustCompile(`\b(?:gsk|ghp|gho|ghs|ghu|github_pat|hf|xai|pplx|glpat)[_-][A-Za-z0-9_-]{16,}`),
	}
})

// minFragment is the shortest run of a configured secret that scrub removes wherever it appears: any 8 or more
// consecutive bytes of a secret (its start, its end, any inner run) become [redacted]. A secret shorter than
// that is removed whole.
const minFragment = 8

// scrubber removes secrets from text that may leave the daemon (errors, logs). Every run of minFragment or more
// bytes of a configured secret is removed wherever it appears, key shapes too, and cutTail removes a configured
// secret's start left at the end of a cut text.
//
// Runs are found with an index of every minFragment-byte window (gram) of every secret: a text window of 8
// bytes is one uint64, checked against a 64 Ki-bit filter and then the set, so scrubbing costs one shift and
// one bit test per byte of text, whatever the number and length of the secrets. A run of 8 or more bytes of a
// secret is exactly a chain of overlapping grams of that secret, so marking every text window that is a gram
// and merging the marks covers every such run (and, at worst, a run that chains grams of two secrets).
type scrubber struct {
	secrets []string            // the configured secrets
	short   *strings.Replacer   // the secrets shorter than minFragment, removed whole; nil when there are none
	shorts  []string            // those secrets
	grams   map[uint64]struct{} // every minFragment-byte window of every longer secret, big-endian
	filter  *[1 << 10]uint64    // bit gramSlot(g) is set for every gram g; nil when there are no grams
}

func newScrubber(secrets []string) *scrubber {
	s := &scrubber{secrets: secrets}
	var pairs []string
	for _, sec := range secrets {
		if len(sec) < minFragment {
			pairs = append(pairs, sec, redacted)
			s.shorts = append(s.shorts, sec)
			continue
		}
		if s.grams == nil {
			s.grams, s.filter = map[uint64]struct{}{}, new([1 << 10]uint64)
		}
		for i := 0; i+minFragment <= len(sec); i++ {
			g := gramAt(sec, i)
			s.grams[g] = struct{}{}
			slot := gramSlot(g)
			s.filter[slot>>6] |= 1 << (slot & 63)
		}
	}
	if len(pairs) > 0 {
		s.short = strings.NewReplacer(pairs...)
	}
	return s
}

// gramAt is the minFragment bytes of s at i as one big-endian word.
func gramAt(s string, i int) uint64 {
	var g uint64
	for _, c := range []byte(s[i : i+minFragment]) {
		g = g<<8 | uint64(c)
	}
	return g
}

// gramSlot hashes a gram onto the filter's 65,536 bits.
func gramSlot(g uint64) uint64 { return (g * 0x9E3779B97F4A7C15) >> 48 }

// isGram reports whether the window g is a gram of a configured secret.
func (s *scrubber) isGram(g uint64) bool {
	slot := gramSlot(g)
	if s.filter[slot>>6]&(1<<(slot&63)) == 0 {
		return false
	}
	_, ok := s.grams[g]
	return ok
}

// nextRun returns the first run of text at or after from that is made of grams (overlapping or touching), as
// [start, end), or -1, -1.
func (s *scrubber) nextRun(text string, from int) (int, int) {
	if s.grams == nil || len(text)-from < minFragment {
		return -1, -1
	}
	start, end := -1, -1
	var w uint64
	for i := from; i < len(text); i++ {
		w = w<<8 | uint64(text[i])
		at := i + 1 - minFragment
		if at < from {
			continue
		}
		if start >= 0 && at > end {
			return start, end // the run ended: this window neither overlaps nor touches it
		}
		if s.isGram(w) {
			if start < 0 {
				start = at
			}
			end = i + 1
		}
	}
	return start, end
}

// redactRuns replaces every run of minFragment or more bytes of a configured secret with [redacted], and
// reports whether there was one.
func (s *scrubber) redactRuns(text string) (string, bool) {
	start, end := s.nextRun(text, 0)
	if start < 0 {
		return text, false
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for start >= 0 {
		b.WriteString(text[last:start])
		b.WriteString(redacted)
		last = end
		start, end = s.nextRun(text, end)
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// scrub returns text without any run of minFragment bytes of a configured secret (nor a whole shorter one) and
// without key shapes. If replacing still leaves one (a secret that overlaps the marker, like "ted]x"), the text
// is withheld entirely.
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
		before := text
		if s.short != nil {
			text = s.short.Replace(text)
		}
		var ran bool
		text, ran = s.redactRuns(text)
		// lower is not redone after a shape replaced something: a replacement only cuts text and puts in
		// "[redacted]", which holds no hint and starts and ends with bytes no hint has, so the hints of the
		// old lower are a superset of the new text's.
		ascii, lower := hints && isASCII(text), ""
		for i, re := range keyShapes() {
			if ascii && !mayMatch(i, text, &lower) {
				continue
			}
			if re.NumSubexp() > 0 {
				text = re.ReplaceAllString(text, "${1}"+redacted)
			} else {
				text = re.ReplaceAllLiteralString(text, redacted)
			}
		}
		// Nothing replaced means nothing was there (a short secret or a shape replaced changes the length); a
		// replacement can make a new run with the marker's bytes, so a changed text is checked again.
		if (!ran && text == before) || !s.holdsSecret(text) {
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

// holdsSecret reports whether text holds a secret shorter than minFragment or a run of minFragment bytes of a
// longer one.
func (s *scrubber) holdsSecret(text string) bool {
	for _, sec := range s.shorts {
		if strings.Contains(text, sec) {
			return true
		}
	}
	start, _ := s.nextRun(text, 0)
	return start >= 0
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
