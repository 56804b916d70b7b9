package tools

import (
	"strings"
	"testing"
)

// Commands whose real program or arguments only exist after the shell expands them cannot be judged by the
// blocklist's patterns: they are asked about under supervised even when shell is auto-approved or was allowed
// for the session, still run under full, and stay refused when a pattern matches.
func TestIndirectShellCommandsAreAsked(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	auto := Policy{Level: LevelSupervised, AutoApprove: []string{"shell"}}
	indirect := []struct{ cmd, what string }{
		{"x=touch; $x f", "expansion"},
		{"${X} f", "expansion"},
		{"$X", "expansion"},
		{`echo "$(id)"`, "expansion"},
		{"echo $((1+2))", "expansion"},
		{`sh -c "$CMD"`, "expansion"},
		{`$'\x72\x6d' -rf /tmp/x`, "expansion"},
		{"echo `id`", "backquote"},
		{"eval ls", "eval"},
		{`sudo eval "ls"`, "eval"},
		{"if true; then eval ls; fi", "eval"},
		{"exec ls", "exec"},
		{"source ./env.sh", "source"},
		{". ./env.sh", "source"},
		{"ls | xargs touch", "xargs"},
		{"printf 'touch f' | sh", "shell"},
		{"cat script | bash -s", "shell"},
		{"bash < script", "shell"},
		{"bash script.sh", "shell"},
		{"{touch,f}", "brace"},
		{"touch {a..c}", "brace"},
		{"/bin/t?uch f", "pattern"},
		{"/usr/*/touch f", "pattern"},
	}
	for _, tc := range indirect {
		c := call("shell", map[string]any{"command": tc.cmd})
		d := auto.Decide(c, s.ws)
		if d.Verdict != Ask || d.Risk != RiskMedium || !d.AskEveryTime || !strings.Contains(d.Reason, tc.what) || !strings.Contains(d.Reason, "blocklist") {
			t.Errorf("%q under supervised with shell auto-approved: %+v, want Ask (medium, every time) naming %s", tc.cmd, d, tc.what)
		}
		if d := (Policy{Level: LevelSupervised}).Decide(c, s.ws); d.Verdict != Ask {
			t.Errorf("%q under supervised: %+v, want Ask", tc.cmd, d)
		}
		if d := (Policy{Level: LevelFull}).Decide(c, s.ws); d.Verdict != Run || d.Risk != RiskMedium {
			t.Errorf("%q under full: %+v, want Run at medium risk", tc.cmd, d)
		}
		if d := (Policy{Level: LevelReadOnly}).Decide(c, s.ws); d.Verdict != Refuse {
			t.Errorf("%q under readonly: %+v, want Refuse", tc.cmd, d)
		}
	}

	direct := []string{
		"ls -la", "make test", "go test ./...", `git commit -m "fix the exec path"`, "echo eval", "echo 'a b'",
		"[ -f go.mod ] && echo yes", "[[ -n x ]]", "bash -c 'go vet ./...'", "sh -lc ls", "find . -name '*.go'",
		"ls *.go", "cp a b", "echo {}", "echo costs 5$", "grep -c x f",
	}
	for _, cmd := range direct {
		d := auto.Decide(call("shell", map[string]any{"command": cmd}), s.ws)
		if d.Verdict != Run || d.AskEveryTime {
			t.Errorf("%q under supervised with shell auto-approved: %+v, want Run", cmd, d)
		}
	}

	// A matching pattern still refuses, expansion or not.
	for _, cmd := range []string{"rm -rf $HOME", "rm -rf ${HOME}", "$(reboot)", "echo `shutdown -h now`", "x=1; rm -rf /", "eval reboot"} {
		for _, p := range []Policy{auto, {Level: LevelFull}} {
			if d := p.Decide(call("shell", map[string]any{"command": cmd}), s.ws); d.Verdict != Refuse || d.Risk != RiskHigh {
				t.Errorf("%q (%s): %+v, want Refuse", cmd, p.Level, d)
			}
		}
	}
}

// Other tools and plain commands are never asked every time.
func TestAskEveryTimeOnlyForIndirection(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := Policy{Level: LevelSupervised}
	for _, c := range []Call{
		call("shell", map[string]any{"command": "make"}),
		call("file_write", map[string]any{"path": "f.txt", "content": "$x"}),
	} {
		if d := p.Decide(c, s.ws); d.Verdict != Ask || d.AskEveryTime {
			t.Errorf("%s %s: %+v, want Ask without AskEveryTime", c.Name, c.Arguments, d)
		}
	}
}
