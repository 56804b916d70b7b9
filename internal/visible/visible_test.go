package visible

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", ""},
		{"ls -la", "ls -la"},
		{"grüße 日本語 ✓ €", "grüße 日本語 ✓ €"},
		{`a\b`, `a\\b`},
		{`\x1b`, `\\x1b`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"\x00\x07\x08\x0b\x0c\x1b\x1f\x7f", `\x00\x07\x08\x0b\x0c\x1b\x1f\x7f`},
		{"echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] ls", `echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] ls`},
		{"\u0085\u009b\u009f\u0080", `\u0085\u009b\u009f\u0080`},                         // C1 as characters
		{"a\x9b6Ab\xff\xc3", `a\x9b6Ab\xff\xc3`},                                         // bytes that are not UTF-8
		{"\u202e\u202a\u202b\u202c\u202d", `\u202e\u202a\u202b\u202c\u202d`},             // bidi embeddings and overrides
		{"\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},                         // bidi isolates
		{"\u200e\u200f\u061c", `\u200e\u200f\u061c`},                                     // bidi marks
		{"a\u200bb\u200cc\u200dd\u2060e\ufefff", `a\u200bb\u200cc\u200dd\u2060e\ufefff`}, // zero-width, BOM
		{"\u00ad\u034f\u3164\ufe0f\u2028\u2029", `\u00ad\u034f\u3164\ufe0f\u2028\u2029`},
		{"rm\u00a0-rf\u3000x\u2003", `rm\u00a0-rf\u3000x\u2003`},     // spaces that are not word breaks
		{"\U000e0041\U0010fffd\ue000", `\U000e0041\U0010fffd\ue000`}, // tag, private use
		{"\ufffd", "\ufffd"}, // a real replacement character is shown; an invalid byte is not
	}
	for _, tc := range cases {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	got := Lines("echo a\r\nrm x\x1b[2K\n")
	want := []string{`echo a\r`, `rm x\x1b[2K`, ""}
	if !slices.Equal(got, want) {
		t.Fatalf("Lines = %q, want %q", got, want)
	}
	if got := Lines(""); !slices.Equal(got, []string{""}) {
		t.Fatalf(`Lines("") = %q`, got)
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`shell: echo \x1b \\ ok`, `shell: echo \x1b \\ ok`}, // already escaped: unchanged
		{"raw\x1b[6A\r\u202e", `raw\x1b[6A\r\u202e`},
		{"a\nb", `a\nb`},
	}
	for _, tc := range cases {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := SanitizeLines("x\x1b\ny"); !slices.Equal(got, []string{`x\x1b`, "y"}) {
		t.Fatalf("SanitizeLines = %q", got)
	}
}

// unescape inverts Escape; it fails on anything Escape cannot produce, which makes the round trip a proof that
// Escape is injective.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !Visible(r) {
				return "", fmt.Errorf("unescaped %U at %d", r, i)
			}
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("dangling backslash")
		}
		width := 0
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'x':
			width = 2
		case 'u':
			width = 4
		case 'U':
			width = 8
		default:
			return "", fmt.Errorf("unknown escape %q", s[i:i+2])
		}
		if width == 0 {
			i += 2
			continue
		}
		if i+2+width > len(s) {
			return "", fmt.Errorf("short escape at %d", i)
		}
		hex := s[i+2 : i+2+width]
		if strings.ToLower(hex) != hex {
			return "", fmt.Errorf("uppercase hex %q", hex)
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return "", err
		}
		if width == 2 {
			if (v >= 0x20 && v < 0x7f) || v == '\t' || v == '\n' || v == '\r' {
				return "", fmt.Errorf("\\x%s names a character shown as itself", hex)
			}
			b.WriteByte(byte(v)) // C0, DEL, or a byte that is not UTF-8 (checked by the caller's round trip)
		} else {
			if Visible(rune(v)) || v < 0x80 || (width == 8 && v <= 0xffff) {
				return "", fmt.Errorf("%s names a character shown as itself or in a shorter form", s[i:i+2+width])
			}
			b.WriteRune(rune(v))
		}
		i += 2 + width
	}
	return b.String(), nil
}

// checkShowable fails when out holds anything a terminal would act on or that would not be seen.
func checkShowable(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output of %q is not UTF-8: %q", in, out)
	}
	for _, r := range out {
		if !Visible(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
			unicode.Is(unicode.Bidi_Control, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			t.Fatalf("output of %q holds %U: %q", in, r, out)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{
		"", "ls -la", `a\b\\x1b`, "echo PWNED > marker #\r\x1b[6A\x1b[J[tool shell] {\"command\":\"ls -la\"}...",
		"\u202eevil\u202c", "\xff\xfe\x9b", "\u0085\U000e0001\u00a0", "line1\nline2\r\n", "\\u202e", "日本\u200b語",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		checkShowable(t, s, out)
		back, err := unescape(out)
		if err != nil {
			t.Fatalf("Escape(%q) = %q cannot be read back: %v", s, out, err)
		}
		if back != s {
			t.Fatalf("Escape(%q) = %q reads back as %q: two inputs share an output", s, out, back)
		}
		if again := Sanitize(out); again != out {
			t.Fatalf("Sanitize changed Escape's output %q to %q", out, again)
		}
		checkShowable(t, s, Sanitize(s))
		lines := Lines(s)
		for _, l := range lines {
			checkShowable(t, s, l)
		}
		var rebuilt []string
		for _, l := range lines {
			u, err := unescape(l)
			if err != nil {
				t.Fatalf("Lines(%q) element %q: %v", s, l, err)
			}
			rebuilt = append(rebuilt, u)
		}
		if strings.Join(rebuilt, "\n") != s {
			t.Fatalf("Lines(%q) = %q does not read back", s, lines)
		}
	})
}
