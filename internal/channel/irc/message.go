// Package irc is the IRC channel adapter: one client connection to a server (RFC 1459/2812 lines over TCP or
// TLS), registration with an optional server password, SASL PLAIN or NickServ, the configured channels
// joined, PING answered and sent for liveness, a lost connection reconnected with backoff, and replies split
// so that no line passes IRC's 512-byte limit. No maintained Go IRC library is in the module proxy this
// build can use, so the wire side is written here on the standard library; it is small and fuzzed.
package irc

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Wire limits (RFC 2812 §2.3: a line is at most 512 bytes with its CR LF; IRCv3 tags add up to 8191 more).
const (
	MaxLine     = 512
	MaxTagBytes = 8191
	// senderReserve is room left for the ":nick!user@host " prefix the server puts before a relayed PRIVMSG,
	// which counts against the receiver's 512 bytes (upstream reserves the same 64).
	senderReserve = 64
)

// Message is one parsed line.
type Message struct {
	Tags    map[string]string // IRCv3 message tags (msgid, time...); nil when none
	Prefix  string            // nick!user@host or a server name, without the ':'
	Command string            // upper-cased
	Params  []string          // the trailing parameter last, without its ':'
}

// ErrLine is a line that is not an IRC message.
var ErrLine = errors.New("irc: malformed line")

// Parse reads one line (CR LF optional). It refuses an empty line, a line with NUL, and tags or a body past
// the wire limits, so a hostile server cannot make it hold more than one bounded line.
func Parse(line string) (Message, error) {
	line = strings.TrimRight(line, "\r\n")
	var m Message
	if line == "" || strings.IndexByte(line, 0) >= 0 {
		return m, ErrLine
	}
	if line[0] == '@' {
		sp := strings.IndexByte(line, ' ')
		if sp < 0 || sp > MaxTagBytes+1 {
			return m, ErrLine
		}
		m.Tags = parseTags(line[1:sp])
		line = strings.TrimLeft(line[sp+1:], " ")
	}
	if len(line) > MaxLine {
		return m, ErrLine
	}
	if line != "" && line[0] == ':' {
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			return m, ErrLine
		}
		m.Prefix = line[1:sp]
		line = strings.TrimLeft(line[sp+1:], " ")
	}
	for line != "" {
		if line[0] == ':' {
			m.Params = append(m.Params, line[1:])
			break
		}
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			m.Params = append(m.Params, line)
			break
		}
		m.Params = append(m.Params, line[:sp])
		line = strings.TrimLeft(line[sp+1:], " ")
	}
	if len(m.Params) == 0 {
		return m, ErrLine
	}
	m.Command, m.Params = strings.ToUpper(m.Params[0]), m.Params[1:]
	if m.Command == "" || !validCommand(m.Command) {
		return Message{}, ErrLine
	}
	return m, nil
}

func validCommand(c string) bool {
	for _, r := range c {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func parseTags(s string) map[string]string {
	tags := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		tags[k] = unescapeTag(v)
	}
	return tags
}

func unescapeTag(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i == len(v)-1 {
			if v[i] != '\\' {
				b.WriteByte(v[i])
			}
			continue
		}
		i++
		switch v[i] {
		case ':':
			b.WriteByte(';')
		case 's':
			b.WriteByte(' ')
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// Nick is the nick of the prefix (the part before '!'), or "" for a server prefix.
func (m Message) Nick() string {
	nick, _, found := strings.Cut(m.Prefix, "!")
	if !found && strings.Contains(nick, ".") {
		return "" // a server name
	}
	return nick
}

// Param is the i-th parameter or "".
func (m Message) Param(i int) string {
	if i < len(m.Params) {
		return m.Params[i]
	}
	return ""
}

// String formats the message as a line without CR LF (tags are not written: a client sends none).
func (m Message) String() string {
	var b strings.Builder
	if m.Prefix != "" {
		b.WriteString(":" + m.Prefix + " ")
	}
	b.WriteString(m.Command)
	for i, p := range m.Params {
		b.WriteByte(' ')
		if i == len(m.Params)-1 && (p == "" || strings.ContainsRune(p, ' ') || p[0] == ':') {
			b.WriteByte(':')
		}
		b.WriteString(p)
	}
	return b.String()
}

// clean makes s safe as one parameter: CR, LF and NUL (which would end or corrupt the line, letting a model
// inject a second command) become spaces.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == 0 {
			return ' '
		}
		return r
	}, s)
}

// Split cuts text into PRIVMSG bodies for target: one per line of the text (blank lines dropped), each line
// cut at a UTF-8 boundary (preferring the last space) so that "PRIVMSG target :body\r\n" plus the relayed
// sender prefix stays within MaxLine.
func Split(target, text string) []string {
	limit := MaxLine - senderReserve - len("PRIVMSG ") - len(target) - len(" :") - len("\r\n")
	limit = max(limit, 16)
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimRight(clean(line), " ")
		for len(line) > limit {
			cut := limit
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			if sp := strings.LastIndexByte(line[:cut], ' '); sp > limit/2 {
				cut = sp
			}
			if cut == 0 {
				cut = limit
			}
			out = append(out, line[:cut])
			line = strings.TrimLeft(line[cut:], " ")
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
