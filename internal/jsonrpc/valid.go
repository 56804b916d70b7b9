package jsonrpc

import (
	"bytes"
	"encoding/binary"
)

// Valid reports whether b is one valid JSON value, exactly as encoding/json's Valid does (same grammar, the same
// nesting limit, invalid UTF-8 inside strings accepted), but it crosses long strings, such as the base64 of an
// upload chunk, many times faster: the frames of a 10 MB upload are mostly one string.
func Valid(b []byte) bool {
	v := validator{b: b}
	i, ok := v.value(skipWS(b, 0), 0)
	return ok && skipWS(b, i) == len(b)
}

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

type validator struct{ b []byte }

// stringPlain marks the bytes a string holds as they are: not a quote, a backslash or a control character.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// value validates the value starting at b[i] and returns the index past it.
func (v *validator) value(i, depth int) (int, bool) {
	b := v.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return v.str(i)
	case c == '{':
		return v.object(i, depth+1)
	case c == '[':
		return v.array(i, depth+1)
	case c == '-' || '0' <= c && c <= '9':
		return v.number(i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i >= len(word) && string(b[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return i, false
}

func (v *validator) str(i int) (int, bool) {
	b := v.b
	i++
	// A long string (the base64 of an upload chunk) is crossed by finding its closing quote with the vectorized
	// bytes.IndexByte, then checking the run before it holds no backslash (IndexByte again) and no control
	// character (noControl); a run with a backslash is walked below.
	if q := bytes.IndexByte(b[i:], '"'); q >= longString {
		if run := b[i : i+q]; bytes.IndexByte(run, '\\') < 0 && noControl(run) {
			return i + q + 1, true
		}
	}
	for {
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && stringPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
}

// plain8 reports whether none of the 8 bytes packed in w is a quote, a backslash or a control character (the
// classic "has a zero byte" bit tricks: exact for whether any byte matches).
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	quote := hasZero(w ^ (ones * '"'))
	backslash := hasZero(w ^ (ones * '\\'))
	control := (w - ones*0x20) & ^w & highs
	return quote|backslash|control == 0
}

// longString is the length from which a string's run is checked by noControl rather than walked.
const longString = 256

// noControl reports whether b holds no control character (a byte below 0x20), 32 bytes per step: the bits of
// the "has a byte below n" test are accumulated and checked once at the end (each term is exact, so their union
// is).
func noControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := func(w uint64) uint64 { return (w - ones*0x20) & ^w }
	var acc uint64
	for len(b) >= 32 {
		acc |= below(binary.LittleEndian.Uint64(b)) | below(binary.LittleEndian.Uint64(b[8:])) |
			below(binary.LittleEndian.Uint64(b[16:])) | below(binary.LittleEndian.Uint64(b[24:32]))
		b = b[32:]
	}
	for len(b) >= 8 {
		acc |= below(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return acc&highs == 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func (v *validator) number(i int) (int, bool) {
	b := v.b
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

func (v *validator) object(i, depth int) (int, bool) {
	if depth > maxNesting {
		return i, false
	}
	b := v.b
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = v.str(i); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = v.value(skipWS(b, i+1), depth); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func (v *validator) array(i, depth int) (int, bool) {
	if depth > maxNesting {
		return i, false
	}
	b := v.b
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = v.value(i, depth); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}
