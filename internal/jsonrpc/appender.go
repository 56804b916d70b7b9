package jsonrpc

import (
	"unicode/utf8"
)

// JSONAppender is a params or result value that can append its own encoding to a frame without encoding/json's
// reflection: a notification sent many times a second (a streamed answer's chunks) encodes into the frame's
// pooled buffer with no allocation. AppendJSON appends the same bytes encoding/json would write for the value
// with HTML escaping off (use AppendString for strings), or reports false, having appended nothing, when it
// leaves the value to encoding/json.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, bool)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json writes it with HTML escaping off: '"', '\\'
// and the control characters escaped (\b \f \n \r \t short, the others \u00XX), invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 as \u2028 and \u2029.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
