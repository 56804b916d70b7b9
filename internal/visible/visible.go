// Package visible makes untrusted text safe to show to a person who must judge it: every character that a
// terminal would act on or that would not be seen (controls, escape sequences, bidi overrides, zero-width and
// other invisible format characters) is replaced by a readable escape.
package visible

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that is not plainly visible written as an escape, so that what a
// person reads is exactly what s holds. The mapping is injective (distinct inputs give distinct outputs) and
// its result holds only printable characters and spaces:
//
//   - backslash is written \\ so that it cannot be mistaken for the start of an escape;
//   - tab, newline and carriage return are \t, \n and \r; other C0 controls and DEL are \xNN;
//   - a byte that is not part of valid UTF-8 is \xNN with NN ≥ 80 (a C1 control byte to an 8-bit terminal);
//   - C1 controls, bidi overrides and isolates, zero-width and other format or default-ignorable
//     characters, line and paragraph separators, spaces other than U+0020 (a no-break space looks like a
//     word break but is not one to a shell), private-use and unassigned code points are \uNNNN, or
//     \UNNNNNNNN above U+FFFF.
//
// Hex digits are lowercase.
func Escape(s string) string {
	return escape(s, true)
}

// Lines splits s at newlines and escapes each line with Escape, so that a multi-line text can be shown one
// line per row with nothing hidden. The result has at least one element; joining it with "\n" is injective
// too, since no element holds a newline.
func Lines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return lines
}

// Sanitize is Escape without the escaping of backslash: it is for text that should already have gone through
// Escape (for example a summary built by the daemon), shown defensively by a client that cannot trust its
// source. Escape's output is returned unchanged; anything a terminal would act on is still escaped. Unlike
// Escape it is not injective: a literal "\x1b" and an escape character look the same.
func Sanitize(s string) string {
	return escape(s, false)
}

// SanitizeLines is Lines with Sanitize.
func SanitizeLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Sanitize(l)
	}
	return lines
}

// Visible reports whether Escape shows r as itself: the space, printable ASCII, and graphic non-ASCII
// characters other than space separators and the invisible ones listed in the invisible table.
func Visible(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= ' ' && r < 0x7f
	}
	return unicode.IsGraphic(r) && !unicode.Is(unicode.Zs, r) && !unicode.Is(invisible, r)
}

func escape(s string, backslash bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || (backslash && c == '\\') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			writeHex(&b, uint32(s[i]), 2)
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			writeHex(&b, uint32(r), 2)
		case Visible(r):
			b.WriteString(s[i : i+size])
		case r <= 0xffff:
			b.WriteString(`\u`)
			writeHex(&b, uint32(r), 4)
		default:
			b.WriteString(`\U`)
			writeHex(&b, uint32(r), 8)
		}
		i += size
	}
	return b.String()
}

func writeHex(b *strings.Builder, v uint32, width int) {
	h := strconv.FormatUint(uint64(v), 16)
	for range width - len(h) {
		b.WriteByte('0')
	}
	b.WriteString(h)
}

// invisible holds graphic-looking code points that show nothing or change how neighbouring text is shown:
// the Unicode default-ignorable code points that unicode.IsGraphic admits (combining grapheme joiner, Hangul
// fillers, Khmer inherent vowels, Mongolian variation selectors, variation selectors, ...), plus blank
// letters such as the braille blank. Format characters (Cf) such as bidi controls, zero-width joiners and the
// BOM are not graphic and need no entry.
var invisible = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00ad, Hi: 0x00ad, Stride: 1}, // soft hyphen (Cf, listed for clarity)
		{Lo: 0x034f, Hi: 0x034f, Stride: 1}, // combining grapheme joiner
		{Lo: 0x115f, Hi: 0x1160, Stride: 1}, // Hangul choseong/jungseong fillers
		{Lo: 0x17b4, Hi: 0x17b5, Stride: 1}, // Khmer inherent vowels
		{Lo: 0x180b, Hi: 0x180f, Stride: 1}, // Mongolian free variation selectors, vowel separator
		{Lo: 0x2028, Hi: 0x2029, Stride: 1}, // line and paragraph separators
		{Lo: 0x2800, Hi: 0x2800, Stride: 1}, // braille pattern blank
		{Lo: 0x3164, Hi: 0x3164, Stride: 1}, // Hangul filler
		{Lo: 0xfe00, Hi: 0xfe0f, Stride: 1}, // variation selectors
		{Lo: 0xffa0, Hi: 0xffa0, Stride: 1}, // halfwidth Hangul filler
	},
	R32: []unicode.Range32{
		{Lo: 0x1bca0, Hi: 0x1bca3, Stride: 1}, // shorthand format controls
		{Lo: 0x1d173, Hi: 0x1d17a, Stride: 1}, // musical symbol format controls
		{Lo: 0xe0000, Hi: 0xe0fff, Stride: 1}, // tags and variation selectors supplement
	},
}
