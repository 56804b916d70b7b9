package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// sessionsPGConfig: an echo agent that asks before a shell call, on [storage] backend = "postgres.shared".
const sessionsPGConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "asks"

[risk_profiles.asks]
level = "supervised"

[storage]
backend = "postgres.shared"

[storage.postgres.shared]
db_url = %q
schema = %q
`

// Two daemons (each its own install, socket and config) on one PostgreSQL database share their chat sessions:
// a session made and prompted on A is listed and read on B, continued there, and A sees B's turn at once; while
// A runs a turn of it (waiting on an approval), B's prompt of the same session is refused busy (-32002), and
// once A's turn ends B's goes through.
func TestSessionsSharedAcrossDaemonsOnPostgres(t *testing.T) {
	dsn, schema := testPG(t)
	if dsn == "" {
		return
	}
	socks := make([]string, 2)
	for i := range socks {
		home, root := homeWithConfig(t, fmt.Sprintf(sessionsPGConfig, dsn, schema))
		socks[i] = filepath.Join(root, "data", "daemon.sock")
		d := start(t, env(home), "daemon")
		waitSocket(t, d, socks[i])
	}
	a, b := cronClient(t, socks[0]), cronClient(t, socks[1])
	sid := rpcResult(t, a, 1, "session/new", map[string]any{"agent_alias": "default"})["session_id"].(string)
	prompt := func(c *ndjson.Client, id, text string) map[string]any {
		t.Helper()
		c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": text}, id)
		for {
			if f := c.Next(); fmt.Sprint(f["id"]) == id {
				return f
			}
		}
	}
	completed := func(f map[string]any) bool {
		r, _ := f["result"].(map[string]any)
		return r != nil && r["outcome"] == "completed"
	}
	if r := prompt(a, "p1", "hello from A"); !completed(r) {
		t.Fatalf("A's turn: %v", r)
	}
	messages := func(c *ndjson.Client, id int) []string {
		t.Helper()
		c.Request("session/messages", map[string]any{"session_id": sid}, id)
		res := c.Result(id)
		var out []string
		for _, m := range res["messages"].([]any) {
			mm := m.(map[string]any)
			out = append(out, fmt.Sprint(mm["role"], ":", mm["content"]))
		}
		return out
	}
	b.Request("session/list", map[string]any{}, 3)
	list := b.Result(3)
	if !strings.Contains(fmt.Sprint(list["sessions"]), sid) {
		t.Fatalf("B's session/list does not have A's session %s: %v", sid, list)
	}
	if got := messages(b, 4); len(got) != 2 || !strings.Contains(got[0], "hello from A") {
		t.Fatalf("B reads A's session as %q", got)
	}
	if r := prompt(b, "p2", "and from B"); !completed(r) {
		t.Fatalf("B's turn: %v", r)
	}
	if got := messages(a, 6); len(got) != 4 || !strings.Contains(got[2], "and from B") {
		t.Fatalf("A reads the session after B's turn as %q", got)
	}

	// A runs a turn that waits on an approval nobody gives: the session's turn is A's.
	a.Request("session/prompt", map[string]any{"session_id": sid, "prompt": `/tool shell {"command": "echo held"}`}, "held")
	deadline := time.Now().Add(30 * time.Second)
	for asked := false; !asked; {
		if time.Now().After(deadline) {
			t.Fatal("A's turn never asked for its approval")
		}
		f := a.Next()
		asked = strings.Contains(fmt.Sprint(f["method"]), "approval") || strings.Contains(fmt.Sprint(f["params"]), "approval")
	}
	r := prompt(b, "p3", "B while A runs")
	e, _ := r["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32002) {
		t.Fatalf("B's prompt while A's turn runs: %v, want -32002 (busy)", r)
	}
	a.Request("session/cancel", map[string]any{"session_id": sid}, 8)
	for done := false; !done; {
		if time.Now().After(deadline) {
			t.Fatal("A's cancelled turn did not end")
		}
		done = fmt.Sprint(a.Next()["id"]) == "held"
	}
	if r := prompt(b, "p4", "B after A"); !completed(r) {
		t.Fatalf("B's turn after A's ended: %v", r)
	}
	if got := messages(a, 10); !strings.Contains(got[len(got)-1], "B after A") {
		t.Fatalf("A does not see B's last turn: %q", got)
	}
}
