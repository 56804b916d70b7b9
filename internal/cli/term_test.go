package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestColourOnlyOnTerminalAndNeverWithNO_COLOR(t *testing.T) {
	var buf bytes.Buffer
	if (Env{}).colour(&buf) {
		t.Error("colour on a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if (Env{}).colour(f) {
		t.Error("colour on a regular file")
	}
	if !(Env{Environ: []string{"ZEROCLAW_FORCE_COLOR=1"}}).colour(&buf) {
		t.Error("forced colour refused")
	}
	for _, kv := range []string{"NO_COLOR=1", "TERM=dumb"} {
		if (Env{Environ: []string{"ZEROCLAW_FORCE_COLOR=1", kv}}).colour(&buf) {
			t.Errorf("colour with %s", kv)
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil { // only when the test has a terminal
		defer tty.Close()
		if !(Env{}).colour(tty) || (Env{Environ: []string{"NO_COLOR=1"}}).colour(tty) {
			t.Error("terminal colour rules")
		}
	}
}

func TestTableFitsWidth(t *testing.T) {
	render := func(environ ...string) string {
		var buf bytes.Buffer
		tb := newTable(Env{Environ: environ}, &buf, "ID", "AGENT", "TITLE")
		tb.Row("sess-1", "default", strings.Repeat("a long title ", 10))
		tb.Row("sess-2", "ü-agent", "short")
		if err := tb.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	whole := render()
	if !strings.Contains(whole, strings.TrimSpace(strings.Repeat("a long title ", 10))) || strings.Contains(whole, "\x1b[") {
		t.Fatalf("unbounded table:\n%s", whole)
	}
	cutOut := render("COLUMNS=40")
	for _, l := range strings.Split(strings.TrimSuffix(cutOut, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 40 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(cutOut, "…") || !strings.Contains(cutOut, "sess-1  default  a long") {
		t.Fatalf("cut table:\n%s", cutOut)
	}
	// Too narrow for every column's minimum: columns stop at minColumn, nothing panics.
	if narrow := render("COLUMNS=5"); !strings.Contains(narrow, "sess-1") {
		t.Fatalf("narrow:\n%s", narrow)
	}
	if bold := render("ZEROCLAW_FORCE_COLOR=1"); !strings.Contains(bold, "\x1b[1mID\x1b[0m") || strings.Contains(render("ZEROCLAW_FORCE_COLOR=1", "NO_COLOR=1"), "\x1b[") {
		t.Fatalf("header style:\n%q", bold)
	}
}
