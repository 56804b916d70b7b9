package provider

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Limits bound what one Stream call accepts from the backend. They are checked while the response streams, so
// a backend that never stops is cut off once it passes them, not after its output was buffered. The zero value
// means no limit.
type Limits struct {
	// MaxTextBytes bounds the answer and reasoning text together, counted as JSON-encoded bytes (what a client
	// receives: a quote or a newline counts 2, a control character 6). 0 means no limit; a negative value
	// allows no text at all (a caller whose budget is spent).
	MaxTextBytes int
	// MaxToolArgBytes bounds the arguments of any one tool call, as received. 0 means no limit.
	MaxToolArgBytes int
	// MaxToolCalls bounds the tool calls of one response. 0 means no limit.
	MaxToolCalls int
}

// What a LimitError names.
const (
	LimitText      = "text"
	LimitToolArgs  = "tool_args"
	LimitToolCalls = "tool_calls"
)

// ErrLimit is what every *LimitError matches with errors.Is.
var ErrLimit = errors.New("provider: response limit exceeded")

// LimitError reports a response that went over one of Request.Limits. The stream was abandoned (its request
// cancelled) when it happened; the Result returned with it holds the text that fit, and no tool call that did
// not.
type LimitError struct {
	Alias string
	What  string // LimitText, LimitToolArgs or LimitToolCalls
	Limit int
}

func (e *LimitError) Error() string {
	var what string
	switch e.What {
	case LimitText:
		what = fmt.Sprintf("more than %d bytes of text", e.Limit)
	case LimitToolArgs:
		what = fmt.Sprintf("tool-call arguments longer than %d bytes", e.Limit)
	case LimitToolCalls:
		what = fmt.Sprintf("more than %d tool calls", e.Limit)
	default:
		what = fmt.Sprintf("more than %d of %s", e.Limit, e.What)
	}
	return fmt.Sprintf("provider: %s: the response carried %s; stopped reading it", e.Alias, what)
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// EncodedPrefix returns the length in bytes of the longest prefix of s, cut on a rune boundary, whose
// EncodedLen is at most n.
func EncodedPrefix(s string, n int) int {
	cut, used := 0, 0
	for cut < len(s) {
		r, size := utf8.DecodeRuneInString(s[cut:])
		w := runeEncodedLen(r, size)
		if used+w > n {
			break
		}
		used += w
		cut += size
	}
	return cut
}

// budget checks one response against its Limits as it streams.
type budget struct {
	alias string
	lim   Limits
	text  int // encoded bytes of text taken so far
}

func newBudget(alias string, lim Limits) *budget { return &budget{alias: alias, lim: lim} }

func (b *budget) fail(what string, limit int) error {
	return &LimitError{Alias: b.alias, What: what, Limit: limit}
}

// takeText returns the longest prefix of s (cut on a rune boundary) that fits the text budget, and a
// *LimitError when that is not all of s.
func (b *budget) takeText(s string) (string, error) {
	switch {
	case b.lim.MaxTextBytes == 0:
		return s, nil
	case b.lim.MaxTextBytes < 0:
		if s == "" {
			return "", nil
		}
		return "", b.fail(LimitText, 0)
	}
	room := b.lim.MaxTextBytes - b.text
	n := encodedLen(s)
	if n <= room {
		b.text += n
		return s, nil
	}
	cut := EncodedPrefix(s, room)
	b.text += encodedLen(s[:cut])
	return s[:cut], b.fail(LimitText, b.lim.MaxTextBytes)
}

// checkArgs fails when a tool call's arguments have grown to n bytes past the limit.
func (b *budget) checkArgs(n int) error {
	if b.lim.MaxToolArgBytes > 0 && n > b.lim.MaxToolArgBytes {
		return b.fail(LimitToolArgs, b.lim.MaxToolArgBytes)
	}
	return nil
}

// checkCalls fails when the response has opened n tool calls, more than the limit.
func (b *budget) checkCalls(n int) error {
	if b.lim.MaxToolCalls > 0 && n > b.lim.MaxToolCalls {
		return b.fail(LimitToolCalls, b.lim.MaxToolCalls)
	}
	return nil
}

// EncodedLen is the length of s as the body of a JSON string written without HTML escaping, as encoding/json
// with SetEscapeHTML(false) writes it (invalid UTF-8 becomes \ufffd): what Limits.MaxTextBytes counts.
func EncodedLen(s string) int { return encodedLen(s) }

func encodedLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			n += asciiEncodedLen(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeEncodedLen(r, size)
		i += size
	}
	return n
}

func runeEncodedLen(r rune, size int) int {
	switch {
	case r < utf8.RuneSelf:
		return asciiEncodedLen(byte(r))
	case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
		return 6 // \ufffd, \u2028, \u2029
	}
	return size
}

func asciiEncodedLen(c byte) int {
	switch {
	case c == '"', c == '\\', c == '\n', c == '\r', c == '\t', c == '\b', c == '\f':
		return 2
	case c < 0x20:
		return 6
	}
	return 1
}
