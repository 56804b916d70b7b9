package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sopDraft(name, desc string, steps ...string) map[string]any {
	var ss []any
	for _, s := range steps {
		ss = append(ss, map[string]any{"title": s, "policy": "p-" + s, "kind": "checkpoint"})
	}
	return map[string]any{"name": name, "description": desc, "version": "1.0.0", "priority": "normal",
		"execution_mode": "supervised", "triggers": []any{map[string]any{"type": "manual"}}, "steps": ss}
}

// kill -9 of the real binary in the middle of a SOP save (the journal written, neither file replaced) and of a
// SOP create (the folder complete, not yet in place): after a restart the saved SOP is the new one whole
// (description and steps together, never the old manifest with the new steps), the created one does not
// exist and can be created, and nothing is left that loads as a stray SOP.
func TestKill9DuringSopSaveAndCreate(t *testing.T) {
	t.Parallel()
	exe, err := crashBinary()
	if err != nil {
		t.Fatal(err)
	}
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	sock := filepath.Join(root, "data", "daemon.sock")
	sops := filepath.Join(root, "shared", "sops")

	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("sops/create", map[string]any{"sop": sopDraft("deploy", "old-description", "A", "B")}, 1)
	c.Result(1)
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 20*time.Second)

	// 1. Killed between the journal and the two files of a save.
	d = startBinary(t, exe, env(h, "ZEROCLAW_TEST_CRASH_AT=sop-save-between-files"), "daemon")
	waitSocket(t, d, sock)
	c = dialStream(t, sock)
	c.Request("sops/save", map[string]any{"sop": sopDraft("deploy", "new-description", "X", "Y", "Z"), "original_name": "deploy"}, 2)
	killedBySIGKILL(t, d)
	if _, err := os.Stat(filepath.Join(sops, "deploy", ".sop-save.json")); err != nil {
		t.Fatalf("the crash point was not between the journal and the files: %v", err)
	}

	// The CLI, with no daemon (nothing rolled forward yet), already sees the saved SOP whole: the journal.
	if out, _, code := run(t, env(h), "", "sop", "list"); code != 0 || !strings.Contains(out, "new-description") || !strings.Contains(out, "3      manual") {
		t.Fatalf("sop list after the save crash:\n%s", out)
	}

	// 2. Killed with a created SOP's folder complete but not yet in place.
	d = startBinary(t, exe, env(h, "ZEROCLAW_TEST_CRASH_AT=sop-create-before-publish"), "daemon")
	waitSocket(t, d, sock)
	c = dialStream(t, sock)
	c.Request("sops/create", map[string]any{"sop": sopDraft("fresh", "created", "One")}, 3)
	killedBySIGKILL(t, d)

	// The CLI, with no daemon, sees no half-created SOP.
	if out, _, code := run(t, env(h), "", "sop", "list"); code != 0 || strings.Contains(out, "fresh") || strings.Contains(out, "disabled") {
		t.Fatalf("sop list after the create crash:\n%s", out)
	}

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c = dialStream(t, sock)
	c.Request("sops/get", map[string]any{"name": "deploy"}, 4)
	got := c.Result(4)
	steps, _ := got["steps"].([]any)
	if got["description"] != "new-description" || len(steps) != 3 || steps[0].(map[string]any)["title"] != "X" || steps[0].(map[string]any)["policy"] != "p-X" {
		t.Fatalf("the interrupted save is not the new SOP whole: %v", got)
	}
	entries, err := os.ReadDir(sops)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "deploy" {
		t.Fatalf("left in the SOPs directory after a restart: %v", names)
	}
	if _, err := os.Stat(filepath.Join(sops, "deploy", ".sop-save.json")); !os.IsNotExist(err) {
		t.Fatal("the restart did not roll the journal forward")
	}
	c.Request("sops/create", map[string]any{"sop": sopDraft("fresh", "created", "One")}, 5)
	if r := c.Result(5); r["created"] != "fresh" {
		t.Fatalf("create after the crash: %v", r)
	}
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 20*time.Second)
}
