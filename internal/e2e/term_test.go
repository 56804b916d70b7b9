package e2e

import (
	"strings"
	"testing"
)

// On a real terminal (a tmux pane) zeroclaw doctor colours its marks; NO_COLOR turns that off, and so does a
// pipe (every other test reads the output through one and sees no escape).
func TestDoctorColourOnTerminalOnly(t *testing.T) {
	t.Parallel()
	h := home(t)
	for _, c := range []struct {
		extra  []string
		colour bool
	}{
		{[]string{"TERM=xterm"}, true},
		{[]string{"TERM=xterm", "NO_COLOR=1"}, false},
	} {
		argv := append([]string{"env", "-i"}, env(h, c.extra...)...)
		term := newTmux(t, append(argv, binary, "doctor", "--offline")...)
		term.waitScreen("errors")
		scr := term.run("capture-pane", "-p", "-e", "-t", "zc") // -e keeps the styles
		if got := strings.Contains(scr, "\x1b[33mWARN"); got != c.colour {
			t.Errorf("%v: coloured WARN %v, want %v; screen:\n%q", c.extra, got, c.colour, scr)
		}
	}
	out, _, _ := run(t, env(h, "TERM=xterm"), "", "doctor", "--offline")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escapes through a pipe:\n%q", out)
	}
}
