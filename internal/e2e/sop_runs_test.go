package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sopConfig: the echo agent, and the SOP runtime reading <install>/shared/sops.
const sopConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true

[sop]
sops_dir = "shared/sops"
`

// dropSOP writes the SOP folder a user drops in: "deploy", supervised (step 1 waits for a person), manual.
func dropSOP(t *testing.T, root string) {
	t.Helper()
	dir := filepath.Join(root, "shared", "sops", "deploy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"SOP.toml": "[sop]\nname = \"deploy\"\ndescription = \"Ship a build\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n",
		"SOP.md":   "# Deploy\n\n## Steps\n\n1. **Check** — Check that the build in the payload passed.\n2. **Ship** — Say that it shipped.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

var runIDRe = regexp.MustCompile(`started run (\S+)`)

// waitPending polls `zeroclaw sop pending` until run waits for a decision.
func waitPending(t *testing.T, environ []string, run string) {
	t.Helper()
	eventually(t, 30*time.Second, "run "+run+" pending", func() bool {
		out, _, code := run2(t, environ, "sop", "pending")
		return code == 0 && strings.Contains(out, run) && strings.Contains(out, "approval")
	})
}

func run2(t *testing.T, environ []string, args ...string) (string, string, int) {
	t.Helper()
	return run(t, environ, "", args...)
}

// The "done when" on the real binary: a SOP folder dropped in and validated, run from the CLI with --wait, its gate
// approved from a second client, the first one sees it finish; a run parked at its gate survives kill -9 and
// finishes after the restart; a deny ends a run cancelled with its reason, shown by `sop runs` and `sop show`.
func TestSopRunApprovedFromSecondClient(t *testing.T) {
	t.Parallel()
	h, root := homeWithConfig(t, sopConfig)
	dropSOP(t, root)
	sock := filepath.Join(root, "data", "daemon.sock")
	environ := env(h)
	if o, e, code := run2(t, environ, "sop", "validate"); code != 0 || !strings.Contains(o, "ok: 1 SOP(s)") {
		t.Fatalf("sop validate: %d %q %q", code, o, e)
	}
	d := start(t, environ, "daemon")
	waitSocket(t, d, sock)

	// Client 1 runs the SOP and waits for the end.
	var out syncBuffer
	cmd := exec.Command(binary, "sop", "run", "deploy", "--payload", `{"build":"1.2.3"}`, "--wait")
	cmd.Env = environ
	cmd.Stdout = &out
	waiter := startCmd(t, cmd, "sop run --wait")
	var id string
	eventually(t, 30*time.Second, "run id printed", func() bool {
		m := runIDRe.FindStringSubmatch(out.String())
		if m != nil {
			id = m[1]
		}
		return m != nil
	})
	waitPending(t, environ, id)
	if waiter.exited() {
		t.Fatalf("sop run --wait returned at the gate: %q", out.String())
	}

	// Client 2 approves the gate it was shown (step 1); an answer bound to another step resolves nothing.
	if _, e, code := run2(t, environ, "sop", "approve", id, "--step", "2"); code == 0 || !strings.Contains(e, "step") {
		t.Fatalf("sop approve bound to the wrong step: %d %q", code, e)
	}
	waitPending(t, environ, id)
	if o, e, code := run2(t, environ, "sop", "approve", id, "--step", "1"); code != 0 || !strings.Contains(o, "resumed") {
		t.Fatalf("sop approve: %d %q %q", code, o, e)
	}
	if code := waiter.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("sop run --wait exited %d: %q %s", code, out.String(), waiter.stderr.String())
	}
	if s := out.String(); !strings.Contains(s, "waiting_approval: step 1 of 2") || !strings.Contains(s, "completed") {
		t.Fatalf("sop run --wait printed %q", s)
	}
	show, e, code := run2(t, environ, "sop", "show", id)
	if code != 0 || !strings.Contains(show, "status:   completed (step") || !strings.Contains(show, "by:       cli:operator") {
		t.Fatalf("sop show: %d %q %q", code, show, e)
	}
	if n := strings.Count(show, "  completed  "); n < 2 {
		t.Fatalf("sop show lists %d completed steps, want 2:\n%s", n, show)
	}

	// A second run parks at its gate; kill -9; after the restart it still waits, and an approval finishes it.
	o, e, code := run2(t, environ, "sop", "run", "deploy")
	m := runIDRe.FindStringSubmatch(o)
	if code != 0 || m == nil {
		t.Fatalf("sop run: %d %q %q", code, o, e)
	}
	id2 := m[1]
	waitPending(t, environ, id2)
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 15*time.Second)
	d = start(t, environ, "daemon")
	waitSocket(t, d, sock)
	waitPending(t, environ, id2)
	if o, e, code := run2(t, environ, "sop", "approve", id2); code != 0 || !strings.Contains(o, "resumed") {
		t.Fatalf("sop approve after restart: %d %q %q", code, o, e)
	}
	eventually(t, 60*time.Second, "run "+id2+" completed", func() bool {
		o, _, _ := run2(t, environ, "sop", "show", id2)
		return strings.Contains(o, "status:   completed")
	})

	// A third is denied with a reason; approving it afterwards resolves nothing new.
	o, _, _ = run2(t, environ, "sop", "run", "deploy")
	id3 := runIDRe.FindStringSubmatch(o)[1]
	waitPending(t, environ, id3)
	if o, e, code := run2(t, environ, "sop", "deny", id3, "--reason", "not today"); code != 0 || !strings.Contains(o, "denied") {
		t.Fatalf("sop deny: %d %q %q", code, o, e)
	}
	runs, _, _ := run2(t, environ, "sop", "runs", "--sop", "deploy")
	if !strings.Contains(runs, id3) || !strings.Contains(runs, "cancelled") || !strings.Contains(runs, "not today") {
		t.Fatalf("sop runs:\n%s", runs)
	}
	if _, e, code := run2(t, environ, "sop", "cancel", id3); code == 0 || !strings.Contains(e, "already ended") {
		t.Fatalf("sop cancel of a cancelled run: %d %q", code, e)
	}
	if _, e, code := run2(t, environ, "sop", "run", "deploy", "--payload", "{nope"); code == 0 || !strings.Contains(e, "not valid JSON") {
		t.Fatalf("sop run with a bad payload: %d %q", code, e)
	}
	if _, e, code := run2(t, environ, "sop", "show", "run-ghost"); code == 0 || !strings.Contains(e, "run 'run-ghost' not found") || !strings.Contains(e, "zeroclaw sop runs") {
		t.Fatalf("sop show of an unknown run: %d %q", code, e)
	}
}
