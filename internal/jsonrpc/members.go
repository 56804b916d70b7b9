package jsonrpc

import (
	"bytes"
	"encoding/json"
	"iter"
	"unicode/utf8"
)

// Members yields the members of the JSON object obj in order: each key unescaped, each value as a slice of obj
// (not a copy; its capacity ends with the value, so appending to it cannot overwrite obj). A key that appears
// twice is yielded twice. obj must be valid JSON (json.Valid, as every frame Classify accepts and all its
// parts are); for a value that is not an object nothing is yielded.
//
// It lets a large frame be taken apart without copying it: decoding into a map[string]json.RawMessage copies
// every value.
func Members(obj []byte) iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		sc := scanMembers(obj)
		for {
			key, val, ok := sc.next()
			if !ok || !yield(unquoteKey(key), val) {
				return
			}
		}
	}
}

// RawMembers is Members with each key as it appears in obj, quotes and escapes included: a caller that only
// compares keys or looks them up (UnquoteKey for a key with escapes) allocates nothing.
func RawMembers(obj []byte) iter.Seq2[[]byte, json.RawMessage] {
	return func(yield func([]byte, json.RawMessage) bool) {
		sc := scanMembers(obj)
		for {
			key, val, ok := sc.next()
			if !ok || !yield(key, val) {
				return
			}
		}
	}
}

// UnquoteKey unescapes a quoted key as Members does.
func UnquoteKey(q []byte) string { return unquoteKey(q) }

// memberScanner walks the members of a JSON object as Members does, yielding each key still quoted, so a caller
// that only compares keys with known names allocates nothing (keyIs).
type memberScanner struct {
	obj []byte
	i   int // the next member's opening quote; past the end when done
}

func scanMembers(obj []byte) memberScanner {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return memberScanner{obj: obj, i: len(obj)}
	}
	return memberScanner{obj: obj, i: skipWS(obj, i+1)}
}

// next returns the next member: its quoted key and its value (a slice of obj whose capacity ends with it).
func (s *memberScanner) next() (key []byte, val json.RawMessage, ok bool) {
	obj, i := s.obj, s.i
	if i >= len(obj) || obj[i] != '"' {
		return nil, nil, false
	}
	end := stringEnd(obj, i)
	key = obj[i:end]
	i = skipWS(obj, end)
	if i >= len(obj) || obj[i] != ':' {
		s.i = len(obj)
		return nil, nil, false // not valid JSON
	}
	i = skipWS(obj, i+1)
	vend := valueEnd(obj, i)
	val = obj[i:vend:vend]
	i = skipWS(obj, vend)
	if i < len(obj) && obj[i] == ',' {
		i = skipWS(obj, i+1)
	}
	s.i = i
	return key, val, true
}

// keyIs reports whether the quoted key q unescapes to name, without allocating when q has no escapes.
func keyIs(q []byte, name string) bool {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 {
		return string(q[1:len(q)-1]) == name // invalid UTF-8 would become U+FFFD: it cannot equal an ASCII name
	}
	return unquoteKey(q) == name
}

// skipWS returns the index of the first byte at or after i that is not JSON whitespace.
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts with the quote at b[i].
func stringEnd(b []byte, i int) int {
	// Jump from quote to quote (bytes.IndexByte is vectorized), stepping over escapes: a long string without
	// any, the base64 of an upload chunk, is crossed at memory speed.
	for j := i + 1; j < len(b); {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return len(b)
		}
		bs := bytes.IndexByte(b[j:j+q], '\\')
		if bs < 0 {
			return j + q + 1
		}
		j += bs + 2
	}
	return len(b)
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// unquoteKey unescapes a quoted key as encoding/json does (invalid UTF-8 becomes U+FFFD).
func unquoteKey(q []byte) string {
	if len(q) < 2 {
		return "" // not valid JSON
	}
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}
