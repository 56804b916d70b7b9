package e2e

import (
	"strings"
	"testing"
	"time"
)

// The real binary: a fact the agent stores with memory_store (the echo model's /tool command) is listed,
// searched, shown and forgotten with `zeroclaw memory`, and lives in data/memory/brain.db across a restart.
func TestMemoryCommands(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := agentSock(h)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	runOK(t, env(h), "", "agent", "-m", `/tool memory_store {"key":"home_city","content":"The user lives in Lisbon"}`)
	if out := runOK(t, env(h), "", "memory", "list", "--category", "core"); !strings.Contains(out, "home_city") ||
		!strings.Contains(out, "The user lives in Lisbon") || !strings.Contains(out, "default") {
		t.Fatalf("memory list:\n%s", out)
	}
	runOK(t, env(h), "", "stop")
	if c := d.wait(t, 10*time.Second); c != 0 {
		t.Fatalf("daemon exit code %d", c)
	}

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	if out := runOK(t, env(h), "", "memory", "search", "Lisbon", "--agent", "default"); !strings.Contains(out, "home_city") || !strings.Contains(out, "100%") {
		t.Fatalf("memory search after a restart:\n%s", out)
	}
	if out := runOK(t, env(h), "", "memory", "get", "home_city"); !strings.Contains(out, "The user lives in Lisbon") {
		t.Fatalf("memory get:\n%s", out)
	}
	runOK(t, env(h), "", "memory", "forget", "home_city", "--agent", "default")
	_, errOut, code := run(t, env(h), "", "memory", "get", "home_city")
	if code == 0 || !strings.Contains(errOut, "Memory key `home_city` not found") {
		t.Fatalf("get after forget: exit %d, stderr %q", code, errOut)
	}
}
