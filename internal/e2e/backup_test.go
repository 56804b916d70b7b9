package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// messages returns the role:content of every message of a session.
func messages(t *testing.T, c *ndjson.Client, id string, rid int) []string {
	t.Helper()
	c.Request("session/messages", map[string]any{"session_id": id, "limit": 5000}, rid)
	r := c.Result(rid)
	var out []string
	for _, m := range r["messages"].([]any) {
		mm := m.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s", mm["role"], mm["content"]))
	}
	if total := int(r["total"].(float64)); total != len(out) {
		t.Fatalf("session/messages returned %d of %d", len(out), total)
	}
	return out
}

// Backup under load, with the real binary: one client keeps adding turns and changing the config while
// `zeroclaw backup` runs. The archive restores into a new install whose daemon starts, whose doctor is clean,
// which holds every turn and config change acknowledged before the backup began, and whose history is a
// prefix of the original's (the snapshot of one moment, nothing half-applied out of order).
func TestBackupUnderLoad(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := agentSock(h)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "load", "agent_alias": "default"}, 1)
	c.Result(1)

	rid := 10
	turns, configs := 0, 0
	step := func() {
		rid++
		c.Request("session/prompt", map[string]any{"session_id": "load", "prompt": fmt.Sprintf("msg-%d", turns)}, rid)
		c.Result(rid)
		turns++
		rid++
		c.Request("config/set", map[string]any{"prop": "agents.default.system_prompt", "value": fmt.Sprintf("v-%d", configs)}, rid)
		c.Result(rid)
		configs++
	}
	for range 15 {
		step()
	}
	turnsBefore, configsBefore := turns, configs

	archive := filepath.Join(h, "b.tar.gz")
	b := start(t, env(h), "backup", archive)
	for !b.exited() {
		step()
	}
	if code := b.wait(t, time.Minute); code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, b.stderr.String())
	}
	duringBackup := turns - turnsBefore
	t.Logf("%d turns before the backup, %d while it ran", turnsBefore, duringBackup)
	original := messages(t, c, "load", 9000)
	c.Conn().Close()

	// Restore into a new install beside the first and run it.
	root := filepath.Join(h, "r")
	out := runOK(t, env(h), "", "restore", archive, "--config-dir", root)
	if !strings.Contains(out, "restored ") || !strings.Contains(out, root) {
		t.Fatalf("restore output:\n%s", out)
	}
	rsock := filepath.Join(root, "data", "daemon.sock")
	// The restored install's daemon binds a gateway port of its own beside the first daemon's (or doctor
	// rightly reports its gateway as not served).
	d2 := start(t, env(h, "ZEROCLAW_GATEWAY__PORT=0"), "daemon", "--config-dir", root)
	waitSocket(t, d2, rsock)
	if out, errOut, code := run(t, env(h), "", "doctor", "--offline", "--config-dir", root); code != 0 {
		t.Fatalf("doctor on the restored install: exit %d\n%s\n%s", code, out, errOut)
	}

	rc := dialStream(t, rsock)
	restored := messages(t, rc, "load", 2)
	if len(restored) < 2*turnsBefore {
		t.Fatalf("restored %d messages, but %d turns were acknowledged before the backup began", len(restored), turnsBefore)
	}
	if len(restored) > len(original) {
		t.Fatalf("restored %d messages, more than the original's %d", len(restored), len(original))
	}
	for i := range restored {
		if restored[i] != original[i] {
			t.Fatalf("message %d: restored %q, original %q: not a prefix", i, restored[i], original[i])
		}
	}
	for i := range turnsBefore {
		if restored[2*i] != fmt.Sprintf("user:msg-%d", i) {
			t.Fatalf("message %d is %q", 2*i, restored[2*i])
		}
	}
	rc.Request("config/get", map[string]any{"prop": "agents.default.system_prompt"}, 3)
	v, _ := rc.Result(3)["value"].(string)
	var k int
	if _, err := fmt.Sscanf(v, "v-%d", &k); err != nil || k < configsBefore-1 || k >= configs {
		t.Fatalf("restored system_prompt %q: want v-%d..v-%d", v, configsBefore-1, configs-1)
	}

	// The restored install is the user's, with nothing group- or world-readable.
	for _, p := range []string{filepath.Join(root, "config.toml"), filepath.Join(root, "data", "sessions", "sessions.db")} {
		if m := mode(t, p); m.Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v", p, m)
		}
	}
	// A second restore onto the live install is refused, naming the daemon; the archive is intact.
	_, errOut, code := run(t, env(h), "", "restore", archive, "--config-dir", root, "--force")
	if code == 0 || !strings.Contains(errOut, "a daemon runs on the target install") || !strings.Contains(errOut, "Try: zeroclaw stop") {
		t.Fatalf("restore over a live daemon: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(root + ".before-restore-"); err == nil {
		t.Fatal("moved aside a live install")
	}
}
