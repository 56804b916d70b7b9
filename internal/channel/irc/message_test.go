package irc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	m, err := Parse("@msgid=abc\\sdef;time=x :alice!a@host PRIVMSG #zc :hello  there\r\n")
	if err != nil {
		t.Fatal(err)
	}
	if m.Tags["msgid"] != "abc def" || m.Nick() != "alice" || m.Command != "PRIVMSG" || m.Param(0) != "#zc" || m.Param(1) != "hello  there" {
		t.Fatalf("%+v", m)
	}
	if m, _ := Parse(":irc.test 001 zcbot :Welcome"); m.Nick() != "" || m.Command != "001" {
		t.Fatalf("server prefix: %+v", m)
	}
	for _, bad := range []string{"", "\r\n", ":only-prefix", "PRIV\x00MSG x", "@tags-only", "PRIV-MSG x", strings.Repeat("A", MaxLine+1)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestSplitKeepsEveryLineOneCommand(t *testing.T) {
	parts := Split("#zc", "a\r\nQUIT :bye\x00\n\n"+strings.Repeat("é", 400))
	if parts[0] != "a" || parts[1] != "QUIT :bye" {
		t.Fatalf("%q", parts[:2])
	}
	for _, p := range parts {
		if !utf8.ValidString(p) || strings.ContainsAny(p, "\r\n\x00") {
			t.Fatalf("bad part %q", p)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"@a=b;c :n!u@h PRIVMSG #c :x y", "PING :irc.test", ":s 433 * zcbot :in use", "CAP * ACK :sasl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := Parse(line)
		if err != nil {
			return
		}
		if m.Command == "" || !validCommand(m.Command) {
			t.Fatalf("command %q", m.Command)
		}
		// What we format back parses to the same command and parameters (tags aside).
		if strings.ContainsAny(m.String(), "\r\n\x00") {
			return
		}
		back, err := Parse(m.String())
		if err != nil && len(m.String()) <= MaxLine {
			if m.Prefix == "" || !strings.Contains(m.Prefix, " ") {
				t.Fatalf("re-parse of %q: %v", m.String(), err)
			}
		}
		if err == nil && back.Command != m.Command {
			t.Fatalf("command %q became %q", m.Command, back.Command)
		}
	})
}

func FuzzSplit(f *testing.F) {
	f.Add("#zc", "hello\nworld")
	f.Add("alice", strings.Repeat("ü ", 600))
	f.Fuzz(func(t *testing.T, target, text string) {
		if len(target) > 200 {
			return
		}
		total := 0
		for _, p := range Split(target, text) {
			if p == "" || strings.ContainsAny(p, "\r\n\x00") {
				t.Fatalf("part %q", p)
			}
			if len(target) < 400 && len(p) > max(MaxLine-senderReserve-len("PRIVMSG ")-len(target)-4, 16) {
				t.Fatalf("part of %d bytes for target %q", len(p), target)
			}
			total += len(p)
		}
		if total > 3*len(text) { // an invalid byte becomes U+FFFD (3 bytes)
			t.Fatalf("split made %d bytes of %d", total, len(text))
		}
	})
}
