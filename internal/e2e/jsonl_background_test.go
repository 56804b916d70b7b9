package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 20 item 12, against the real binary: a large legacy JSONL history moves in while the daemon serves. A
// client opens and uses another session during the import, then the daemon is killed with SIGKILL (most likely
// mid-import; the test does not depend on it). After a restart the legacy session holds every line exactly
// once, the session used during the import keeps its turn, and the source is archived.
func TestLegacyJSONLImportServesThenSurvivesKill9(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := filepath.Join(h, ".zeroclaw", "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = 100000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"role\":\"user\",\"content\":\"message %d %s\"}\n", i, strings.Repeat("x", 32))
	}
	if err := os.WriteFile(filepath.Join(dir, "big.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")

	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "live", "agent_alias": "default"}, 2)
	c.Result(2)
	c.Request("session/prompt", map[string]any{"session_id": "live", "prompt": "while importing"}, 3)
	c.Result(3)
	_, staged := os.Lstat(filepath.Join(dir, "big.jsonl.importing"))
	t.Logf("a turn completed with the import still staged: %v", staged == nil)
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 15*time.Second)

	d2 := start(t, env(h), "daemon")
	waitSocket(t, d2, sock)
	got, total := sessionMessages(t, sock, "big")
	if total != n || len(got) == 0 || !strings.HasPrefix(got[len(got)-1], fmt.Sprintf("user: message %d ", n-1)) {
		t.Fatalf("big after the kill: total %d (want %d exactly once), last %q", total, n, got[len(got)-1:])
	}
	if live, total := sessionMessages(t, sock, "live"); total != 2 || live[0] != "user: while importing" {
		t.Errorf("the session used during the import = %q (total %d)", live, total)
	}
	if names := jsonlNames(t, dir); !slices.Equal(names, []string{"big.jsonl.migrated"}) {
		t.Errorf("legacy files after the restart: %q", names)
	}
	signal(t, d2, syscall.SIGTERM)
	if code := d2.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
}
