package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A session id is chosen by whoever creates the session (any principal with sessions:execute: a paired
// device, a [users] user), and the owner's session/list shows every session. Bash's compgen -W expands the
// words it is given, so an id such as $(touch${IFS}FILE) listed by the daemon ran as the owner the moment
// the owner pressed TAB after "zeroclaw sessions show". The completion must run nothing a daemon reports,
// and must not offer a word the shell would read as more than a plain word.
func TestBashCompletionRunsNothingFromTheDaemon(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	marker := filepath.Join(t.TempDir(), "pwned")
	marker2 := marker + "2"
	hostile := []string{
		"$(touch${IFS}" + marker + ")",
		"`touch${IFS}" + marker2 + "`",
		"x;touch${IFS}" + marker2,
	}
	runOK(t, env(h), "", "agent", "-m", "hello", "--session", "plain-sess-1")
	for _, id := range hostile {
		runOK(t, env(h), "", "agent", "-m", "hello", "--session", id)
	}
	script := `source <(zeroclaw completion bash) || exit 9
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
_zeroclaw
printf '%s\n' "${COMPREPLY[@]}"`
	for _, words := range [][]string{
		{"zeroclaw", "sessions", "show", ""},
		{"zeroclaw", "agent", "--session", ""},
		{"zeroclaw", "sessions", "delete", "$"},
		{"zeroclaw", "sessions", "delete", "`"},
	} {
		cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", script, "bash"}, words...)...)
		cmd.Env = append(env(h), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
		}
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		if words[3] == "" && !slices.Contains(got, "plain-sess-1") {
			t.Errorf("%q: plain-sess-1 missing from %q", words, got)
		}
		for _, id := range hostile {
			if slices.Contains(got, id) {
				t.Errorf("%q: offered %q, which the shell would run when the line is entered", words, id)
			}
		}
		for _, m := range []string{marker, marker2} {
			if _, err := os.Stat(m); err == nil {
				t.Fatalf("%q: completing ran a command named in a session id (%s exists)", words, m)
			}
		}
	}
}
