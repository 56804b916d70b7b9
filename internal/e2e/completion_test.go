package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The bash completion script, sourced in a real bash, registers itself (complete -p) and completes commands,
// a group's verbs and a command's flags from the binary, and session ids, agent aliases and config properties
// from the running daemon, in any locale. (zsh and fish are not installed here: their scripts are only
// checked to call zeroclaw __complete.)
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	runOK(t, env(h), "", "agent", "-m", "hello", "--session", "sess-complete-1")

	pathDir := filepath.Dir(binary) // the script calls zeroclaw by name
	lang := ""                      // the shell's LANG: the candidates do not depend on it
	complete := func(words ...string) []string {
		t.Helper()
		script := `source <(zeroclaw completion bash) || exit 9
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
_zeroclaw
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", script, "bash"}, words...)...)
		cmd.Env = append(env(h), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"), "LANG="+lang)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	// The script registers its function for zeroclaw, as `complete -p` shows.
	reg := exec.Command(bash, "--norc", "--noprofile", "-c", `source <(zeroclaw completion bash) && complete -p zeroclaw`)
	reg.Env = append(env(h), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := reg.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "complete -o default -F _zeroclaw zeroclaw" {
		t.Fatalf("complete -p zeroclaw after sourcing: %v %q", err, out)
	}
	cases := []struct {
		words []string
		want  []string
		not   []string
	}{
		{[]string{"zeroclaw", "con"}, []string{"config"}, []string{"costs", "cron", "completion"}},
		{[]string{"zeroclaw", "do"}, []string{"doctor"}, []string{"daemon", "__complete"}},
		{[]string{"zeroclaw", ""}, []string{"agent", "completion", "sessions", "config", "help"}, []string{"__complete"}},
		{[]string{"zeroclaw", "pair", ""}, []string{"code", "list", "revoke"}, nil},
		{[]string{"zeroclaw", "doctor", "--"}, []string{"--offline", "--json", "--config-dir"}, nil},
		{[]string{"zeroclaw", "agent", "-"}, []string{"-a", "--agent", "--session", "-m"}, nil},
		{[]string{"zeroclaw", "completion", ""}, []string{"bash", "fish", "zsh"}, nil},
		{[]string{"zeroclaw", "sessions", "show", "sess-"}, []string{"sess-complete-1"}, nil},
		{[]string{"zeroclaw", "agent", "--session", ""}, []string{"sess-complete-1"}, nil},
		{[]string{"zeroclaw", "agent", "-a", ""}, []string{"default"}, nil},
		{[]string{"zeroclaw", "config", "get", "gateway.po"}, []string{"gateway.port"}, []string{"gateway.host"}},
		{[]string{"zeroclaw", "config", ""}, []string{"get", "set", "list", "validate"}, nil},
	}
	for _, lang = range []string{"", "fr_FR.UTF-8"} {
		for _, c := range cases {
			got := complete(c.words...)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("LANG=%q %q: %q missing from %q", lang, c.words, w, got)
				}
			}
			for _, w := range c.not {
				if slices.Contains(got, w) {
					t.Errorf("LANG=%q %q: %q offered in %q", lang, c.words, w, got)
				}
			}
		}
	}
	lang = ""
	// zsh and fish scripts are printed; an unknown shell is an error with a hint.
	for _, sh := range []string{"zsh", "fish"} {
		if out := runOK(t, env(h), "", "completion", sh); !strings.Contains(out, "zeroclaw __complete") {
			t.Errorf("%s script:\n%s", sh, out)
		}
	}
	if _, errOut, code := run(t, env(h), "", "completion", "tcsh"); code != 1 || !strings.Contains(errOut, "zeroclaw completion bash|zsh|fish") {
		t.Errorf("tcsh: exit %d %s", code, errOut)
	}
	// With no daemon the dynamic ids are simply absent: nothing is started, nothing hangs.
	runOK(t, env(h), "", "stop")
	d.wait(t, 10*time.Second)
	if got := complete("zeroclaw", "sessions", "show", ""); len(got) != 0 {
		t.Errorf("ids with no daemon: %q", got)
	}
	if _, err := os.Stat(agentSock(h)); err == nil {
		t.Errorf("completion started a daemon")
	}
}
