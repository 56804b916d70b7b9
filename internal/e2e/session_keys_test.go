package e2e

import (
	"database/sql"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// storedKeys reads every session_metadata key of sessions.db and the sessions row count per key.
func storedKeys(t *testing.T, path string) ([]string, map[string]int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys []string
	rows, err := db.QueryContext(t.Context(), "SELECT session_key FROM session_metadata ORDER BY session_key")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	counts := map[string]int{}
	rows, err = db.QueryContext(t.Context(), "SELECT session_key, COUNT(*) FROM sessions GROUP BY session_key")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		counts[k] = n
	}
	return keys, counts
}

// The real binary stores a session it makes as rpc_<id>; after a restart the session resumes by its bare id
// and its next turn lands under the same key. A session an earlier release of ours stored under its bare id
// resumes as well and keeps its key: no second row for either.
func TestSessionKeysAcrossRestart(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	sock := filepath.Join(root, "data", "daemon.sock")
	dbPath := filepath.Join(root, "data", "sessions", "sessions.db")

	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "keep-1"}, 2)
	if r := c.Result(2); r["session_id"] != "keep-1" {
		t.Fatalf("session/new: %v", r)
	}
	c.Request("session/prompt", map[string]any{"session_id": "keep-1", "prompt": "first"}, 3)
	if r := c.Result(3); r["content"] != "first" {
		t.Fatalf("first turn: %v", r)
	}
	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	keys, counts := storedKeys(t, dbPath)
	if !slices.Equal(keys, []string{"rpc_keep-1"}) || counts["rpc_keep-1"] != 2 {
		t.Fatalf("sessions.db after the first run: keys %v, rows %v; want rpc_keep-1 with 2 messages", keys, counts)
	}

	// A session of an earlier release: metadata and messages under the bare id.
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `
INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, agent_alias)
    VALUES ('ours-0', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', 2, 'default');
INSERT INTO sessions (session_key, role, content, created_at) VALUES
    ('ours-0', 'user', 'old question', '2026-01-01T00:00:00Z'),
    ('ours-0', 'assistant', 'old answer', '2026-01-01T00:00:01Z');`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	d2 := start(t, env(h), "daemon")
	waitSocket(t, d2, sock)
	c2 := dialStream(t, sock)
	for i, id := range []string{"keep-1", "ours-0"} {
		n := 10 * (i + 1)
		c2.Request("session/new", map[string]any{"session_id": id}, n)
		if r := c2.Result(n); r["session_id"] != id || r["message_count"] != float64(2) {
			t.Fatalf("resume %s: %v", id, r)
		}
		c2.Request("session/prompt", map[string]any{"session_id": id, "prompt": "again"}, n+1)
		if r := c2.Result(n + 1); r["content"] != "again" {
			t.Fatalf("turn on %s: %v", id, r)
		}
	}
	c2.Request("session/list", map[string]any{}, 30)
	listed := map[string]string{}
	for _, it := range c2.Result(30)["sessions"].([]any) {
		m := it.(map[string]any)
		key, _ := m["session_key"].(string)
		listed[m["session_id"].(string)] = key
	}
	if want := map[string]string{"keep-1": "rpc_keep-1", "ours-0": "ours-0"}; len(listed) != 2 ||
		listed["keep-1"] != want["keep-1"] || listed["ours-0"] != want["ours-0"] {
		t.Fatalf("session/list ids and keys = %v, want %v", listed, want)
	}
	signal(t, d2, syscall.SIGTERM)
	if code := d2.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	keys, counts = storedKeys(t, dbPath)
	if !slices.Equal(keys, []string{"ours-0", "rpc_keep-1"}) || counts["rpc_keep-1"] != 4 || counts["ours-0"] != 4 || len(counts) != 2 {
		t.Fatalf("sessions.db after the restart: keys %v, rows %v; want ours-0 and rpc_keep-1 with 4 messages each", keys, counts)
	}
}
